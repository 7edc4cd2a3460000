"""Stand-ins for the imports a runtime's logging code pulls in but never calls.

vLLM's and SGLang's stats loggers live in modules that import torch, CUDA
kernels and tokenizers at the top. The printing itself uses none of them, so
those packages (and only those, listed by the caller) are replaced by modules
whose every attribute is an inert class. Anything the printing really runs —
the runtime's logger, its formatter, its stats dataclasses, its logger
classes — is the runtime's own code from its wheel.
"""

import abc
import importlib.abc
import importlib.machinery
import sys
import types


class _InertMeta(abc.ABCMeta):
    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _inert(name)

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __radd__(cls, other):
        return other

    def __int__(cls):
        return 0

    def __float__(cls):
        return 0.0

    def __call__(cls, *args, **kwargs):
        return type.__call__(cls)

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())

    def __bool__(cls):
        return False

    def __instancecheck__(cls, obj):
        return False

    def __subclasscheck__(cls, sub):
        return False


class _Inert(metaclass=_InertMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Inert()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Inert()

    def __init_subclass__(cls, **kwargs):
        pass

    def __class_getitem__(cls, item):
        return cls

    def __iter__(self):
        return iter(())

    def __getitem__(self, item):
        return _Inert()

    def __radd__(self, other):
        return other

    def __int__(self):
        return 0

    def __float__(self):
        return 0.0

    def __bool__(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _inert(name):
    return _InertMeta(name, (_Inert,), {"__module__": "stub"})


# Attributes a stubbed module does not have: SGLang takes `hasattr(torch, "npu")`
# for an Ascend NPU and raises when that NPU is not available; every other
# device probe calls `is_available()`, which a stub answers falsy.
ABSENT = {"npu"}


class _InertModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []
        self.__file__ = f"<stub {name}>"
        self.__version__ = "0.0.0"

    def __getattr__(self, name):
        if (name.startswith("__") and name.endswith("__")) or name in ABSENT:
            raise AttributeError(name)
        value = _inert(name)
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, prefixes):
        self.prefixes = tuple(prefixes)

    def _matches(self, fullname):
        return any(fullname == p or fullname.startswith(p + ".") for p in self.prefixes)

    def find_spec(self, fullname, path, target=None):
        if self._matches(fullname):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _InertModule(spec.name)

    def exec_module(self, module):
        pass


def stub(prefixes):
    """Replace the named packages (and their submodules) by inert modules."""
    sys.meta_path.insert(0, _StubFinder(prefixes))
