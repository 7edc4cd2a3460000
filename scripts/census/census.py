#!/usr/bin/env python3
"""The census of memory lines (issue 51): every log call of vLLM, SGLang and llama.cpp releases whose text speaks of
memory, written to `census/<runtime>.tsv`.

    python3 scripts/census/census.py              # fetch what is new on PyPI, then extract (the refresh)
    python3 scripts/census/census.py --offline    # extract again from the cache only

Releases are chosen in releases.py, downloaded and trimmed to their sources in fetch.py (cache:
`target/census-cache/`), read by extract_py.py / extract_c.py, and filtered by memory.py. A row is one format
string as one file and function print it, at one level, with the first and the last release (of those read) that
print it exactly so. The Rust test tests/census.rs holds every row to a grammar rule or a written excuse
(`census/<runtime>.verdicts.toml`).
"""

import argparse
import hashlib
import datetime as dt
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extract_c  # noqa: E402
import extract_py  # noqa: E402
from fetch import fetch  # noqa: E402
from memory import is_memory_line, mentions  # noqa: E402
from releases import RUNTIMES, project_metadata, select, version_key  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["format", "style", "level", "file", "function", "first", "last", "releases", "args"]


def releases(runtime, cache, offline, today):
    out = []
    for project, since, how in RUNTIMES[runtime]:
        meta = project_metadata(project, cache, offline)
        for version, uploaded, arch in select(project, meta, since, how, today):
            out.append((project, version, uploaded, arch))
    return out


_MEMO = {}


def extract(runtime, tree):
    """Every call of one release's kept sources (a file read once per content: most do not change between releases)."""
    reader = extract_c if runtime == "llama.cpp" else extract_py
    pattern = "*" if runtime == "llama.cpp" else "*.py"
    for path in sorted(tree.rglob(pattern)):
        if path.is_file() and not path.name.startswith("."):
            rel = path.relative_to(tree).as_posix()
            blob = path.read_bytes()
            key = (rel, hashlib.sha1(blob).digest())
            if key not in _MEMO:
                # a file that never speaks of memory has no row to give: skip the parse
                text = blob.decode("utf-8", "replace")
                _MEMO[key] = list(reader.calls(path, rel)) if mentions(text) else []
            yield from _MEMO[key]


def tsv_cell(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def run(runtime, cache, out_dir, offline, today):
    rels = releases(runtime, cache, offline, today)

    def get(r):
        project, version, uploaded, arch = r
        tree = (cache / runtime / f"{project}-{version}") if offline else fetch(runtime, project, version, arch, cache)
        if tree is None:
            return None  # fetch found no sources in it (xllamacpp 0.1.x vendors no llama.cpp)
        if offline and not (tree / ".complete").exists():
            raise SystemExit(f"{tree}: not in the cache; run without --offline once")
        if (tree / ".complete").read_text().rstrip().endswith(" 0 files"):
            return None
        return tree

    with ThreadPoolExecutor(3) as pool:
        trees = list(pool.map(get, rels))
    rows, read, unparsed = {}, [], 0
    for (project, version, uploaded, _), tree in zip(rels, trees):
        if tree is None:
            continue
        label = version if project in ("vllm", "sglang") else f"{project} {version}"
        read.append((label, uploaded))
        for c in extract(runtime, tree):
            if "unparsed" in c:
                unparsed += 1
                continue
            if not is_memory_line(c["format"], c["style"], c["level"], runtime):
                continue
            key = (c["format"], c["style"], c["level"], c["file"], c["function"])
            row = rows.setdefault(key, {"args": c["args"], "seen": set()})
            row["args"] = c["args"]  # the newest release's arguments
            row["seen"].add(label)
    order = {label: i for i, (label, _) in enumerate(read)}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{runtime}.tsv"
    lines = ["\t".join(COLUMNS)]
    for key in sorted(rows, key=lambda k: (k[0], k[3], k[4], k[2])):
        row = rows[key]
        seen = sorted(row["seen"], key=order.get)
        fmt, style, level, file, function = key
        lines.append("\t".join(tsv_cell(x) for x in [
            fmt, style, level, file, function, seen[0], seen[-1], str(len(seen)), " ¦ ".join(row["args"])]))
    path.write_text("\n".join(lines) + "\n")
    (out_dir / f"{runtime}.releases.tsv").write_text(
        "release\tuploaded\n" + "".join(f"{label}\t{up}\n" for label, up in read))
    print(f"{runtime}: {len(read)} releases ({read[0][0]} … {read[-1][0]}, {read[-1][1]}), {len(rows)} rows"
          + (f", {unparsed} files Python {sys.version_info.major}.{sys.version_info.minor} could not parse" if unparsed else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--offline", action="store_true", help="read only the cache: no network")
    ap.add_argument("--cache", type=Path, default=ROOT / "target" / "census-cache")
    ap.add_argument("--out", type=Path, default=ROOT / "census")
    ap.add_argument("--today", help="the day 'the last year' ends (YYYY-MM-DD; default: the date of the registry snapshot or today)")
    ap.add_argument("runtime", nargs="*", default=list(RUNTIMES))
    a = ap.parse_args()
    today = dt.date.fromisoformat(a.today) if a.today else dt.date.today()
    for runtime in a.runtime:
        run(runtime, a.cache, a.out, a.offline, today)


if __name__ == "__main__":
    main()
