"""Which releases the census reads, chosen from the registry's own list (PyPI's JSON API, the endpoint pip's index
serves), and where each release's source archive is.

The choice is the issue's (issue 51): for vLLM (from 0.4) and SGLang (from 0.2), the first and the last release of
every minor version and every release uploaded in the year before the run; for llama.cpp, the last
`llama-cpp-python` source distribution of every quarter from 2024 on (it vendors llama.cpp under
`vendor/llama.cpp`) and the newest `xllamacpp` source distribution (which vendors a newer llama.cpp). Pre-releases
(`rc`, `dev`, `a`, `b`) are left out: they are not what a user installs.
"""

import datetime as dt
import json
import re
import urllib.request
from urllib.parse import urljoin

PYPI = "https://pypi.org/pypi/{name}/json"

# runtime -> (PyPI project, first version read, selection)
RUNTIMES = {
    "vllm": [("vllm", (0, 4), "minor-ends+year")],
    "sglang": [("sglang", (0, 2), "minor-ends+year")],
    "llama.cpp": [("llama-cpp-python", None, "quarterly-2024"), ("xllamacpp", None, "quarterly-2024")],
}


def version_key(v):
    """A sortable key for the plain release versions these projects use (N.N.N[.N][.postN])."""
    m = re.fullmatch(r"(\d+(?:\.\d+)*)(?:\.post(\d+))?", v)
    if not m:
        return None
    return tuple(int(x) for x in m.group(1).split(".")) + (int(m.group(2) or 0) if m.group(2) else -1,)


def project_metadata(name, cache_dir, offline):
    """The registry's JSON for one project, kept beside the cache so --offline needs no network."""
    path = cache_dir / f"{name}.pypi.json"
    if offline:
        return json.loads(path.read_text())
    with urllib.request.urlopen(PYPI.format(name=name), timeout=120) as r:
        body = r.read()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return json.loads(body)


def _archive(name, files):
    """The source distribution, or a pure-Python wheel when a release has none (vLLM 0.4.0, 0.15.x; SGLang ≥ 0.5.11)."""
    sdist = [f for f in files if f["packagetype"] == "sdist"]
    if sdist:
        return sdist[0]
    wheels = [f for f in files if f["packagetype"] == "bdist_wheel"]
    pure = [f for f in wheels if f["filename"].endswith("-none-any.whl")]
    linux = [f for f in wheels if "manylinux" in f["filename"] and "x86_64" in f["filename"]]
    chosen = pure or linux or wheels
    return min(chosen, key=lambda f: f["size"]) if chosen else None


def select(name, meta, since, how, today):
    """(version, upload date, archive file dict) of the releases the census reads for one project."""
    rels = []
    for v, files in meta["releases"].items():
        key = version_key(v)
        if key is None or not files or any(f.get("yanked") for f in files):
            continue
        if since and key[:2] < since:
            continue
        arch = _archive(name, files)
        if arch is None:
            continue
        uploaded = min(f["upload_time"] for f in files)[:10]
        rels.append((key, v, uploaded, arch))
    rels.sort(key=lambda r: r[0])
    chosen = {}
    if how == "minor-ends+year":
        by_minor = {}
        for r in rels:
            by_minor.setdefault(r[0][:2], []).append(r)
        for group in by_minor.values():
            chosen[group[0][1]] = group[0]
            chosen[group[-1][1]] = group[-1]
        year_ago = (today - dt.timedelta(days=365)).isoformat()
        for r in rels:
            if r[2] >= year_ago:
                chosen[r[1]] = r
    elif how == "quarterly-2024":
        by_quarter = {}
        for r in rels:
            if r[2] >= "2024-01-01":
                y, m = int(r[2][:4]), int(r[2][5:7])
                by_quarter.setdefault((y, (m - 1) // 3), []).append(r)
        for group in by_quarter.values():
            chosen[group[-1][1]] = group[-1]
    elif how == "newest":
        pass
    if rels:
        chosen[rels[-1][1]] = rels[-1]
    out = sorted(chosen.values(), key=lambda r: r[0])
    return [(v, up, arch) for _, v, up, arch in out]


def archive_url(name, arch):
    """The archive's absolute URL (the registry may list it relative to the JSON endpoint)."""
    return urljoin(PYPI.format(name=name), arch["url"])
