"""What every driver shares: the import path of the unpacked wheel, the
stubs, and a fixed clock and pid so that two runs print the same bytes.

The clock and pid are set on each log record after the runtime's own record
factory made it (vLLM's `_VllmLogRecordFactory` included); the runtime's
formatter then prints them with its own format string.
"""

import logging
import sys
import time

import stubs

# 2026-12-07 10:00:00 UTC, the first record; each record after it is 10 s later
# (vLLM logs its stats every 10 s, VLLM_LOG_STATS_INTERVAL's default).
START = 1796637600.0
PID = 4242


class Clock:
    """A monotonic clock the drivers advance by hand (the loggers compute
    throughput from it)."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now

    def time(self):
        return START + (self.now - 1000.0)

    def perf_counter(self):
        return self.now


CLOCK = Clock()


def fixed_records():
    factory = logging.getLogRecordFactory()

    def make(*args, **kwargs):
        record = factory(*args, **kwargs)
        record.created = CLOCK.time()
        record.msecs = 0.0
        record.relativeCreated = 0.0
        record.process = PID
        return record

    logging.setLogRecordFactory(make)


def load(source_dir, stubbed):
    """Put the unpacked wheel first on the path and stub the unused imports."""
    stubs.stub(stubbed)
    sys.path.insert(0, source_dir)


class FakeTime:
    """Stands in for the `time` module inside a logger module only."""

    def __getattr__(self, name):
        if name in ("monotonic", "time", "perf_counter"):
            return getattr(CLOCK, name)
        return getattr(time, name)


def bare_package(source_dir, name):
    """Register a package without running its `__init__.py` (SGLang's imports
    the frontend language and patches transformers; its submodules are loaded
    from the wheel as usual)."""
    import os
    import types

    module = types.ModuleType(name)
    module.__path__ = [os.path.join(source_dir, *name.split("."))]
    sys.modules[name] = module
