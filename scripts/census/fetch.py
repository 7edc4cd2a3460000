"""Download a release's source archive once and keep only the source files the census reads.

A vLLM wheel is hundreds of MB; its sdist tens. Either way only the package's `.py` files (vLLM, SGLang) or
llama.cpp's C/C++/Objective-C sources under `src/`, `ggml/src/`, `common/`, `tools/server/` (and, in 2024's
layout, the tree's root and `examples/server/`) are kept, under `CACHE/<runtime>/<project>-<version>/`. The
archive's SHA-256 is checked against the registry's before anything is kept; the archive itself is not kept.
"""

import hashlib
import io
import shutil
import tarfile
import urllib.request
import zipfile

from releases import archive_url

PY_PACKAGES = {"vllm": ("vllm/",), "sglang": ("sglang/", "python/sglang/")}
C_EXT = (".c", ".cpp", ".h", ".hpp", ".m", ".mm", ".cu", ".cuh")
C_DIRS = ("src/", "ggml/src/", "common/", "tools/server/", "examples/server/")


def _members(blob, filename):
    """(path, reader) for every regular file of a .tar.gz or a .zip/.whl."""
    if filename.endswith((".whl", ".zip")):
        z = zipfile.ZipFile(io.BytesIO(blob))
        for info in z.infolist():
            if not info.is_dir():
                yield info.filename, (lambda i=info: z.read(i))
    else:
        t = tarfile.open(fileobj=io.BytesIO(blob), mode="r:*")
        for m in t:
            if m.isfile():
                yield m.name, (lambda m=m: t.extractfile(m).read())


def _keep_python(path, runtime, is_wheel):
    parts = path.split("/")
    rel = "/".join(parts if is_wheel else parts[1:])
    if not rel.endswith(".py"):
        return None
    for prefix in PY_PACKAGES[runtime]:
        if rel.startswith(prefix):
            return rel[len(prefix) - len(runtime) - 1 :]
    return None


def _keep_c(path):
    marker = "llama.cpp/"
    i = path.find("/" + marker)
    if i < 0:
        return None
    rel = path[i + 1 + len(marker) :]
    if not rel.endswith(C_EXT) or "/test" in "/" + rel:
        return None
    if "/" not in rel or rel.startswith(C_DIRS):
        return rel
    return None


def fetch(runtime, project, version, arch, cache):
    """The cache directory holding the kept sources of one release (downloaded unless already there)."""
    dest = cache / runtime / f"{project}-{version}"
    if (dest / ".complete").exists():
        return dest if not (dest / ".complete").read_text().rstrip().endswith(" 0 files") else None
    url = archive_url(project, arch)
    with urllib.request.urlopen(url, timeout=600) as r:
        blob = r.read()
    want = arch.get("digests", {}).get("sha256")
    if want and hashlib.sha256(blob).hexdigest() != want:
        raise SystemExit(f"{arch['filename']}: SHA-256 differs from the registry's")
    if dest.exists():
        shutil.rmtree(dest)
    is_wheel = arch["filename"].endswith(".whl")
    kept = 0
    for path, read in _members(blob, arch["filename"]):
        rel = _keep_python(path, runtime, is_wheel) if runtime in PY_PACKAGES else _keep_c(path)
        if rel is None:
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(read())
        kept += 1
    if kept == 0:
        # xllamacpp's first releases carry no llama.cpp in their sdist (a git submodule left out)
        dest.mkdir(parents=True, exist_ok=True)
        (dest / ".complete").write_text(f"{arch['filename']} {want or ''} 0 files\n")
        return None
    (dest / ".complete").write_text(f"{arch['filename']} {want or ''} {kept} files\n")
    return dest
