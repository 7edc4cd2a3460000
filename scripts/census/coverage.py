#!/usr/bin/env python3
"""Write the census coverage tables into docs/log-formats.md (§9, between its `census:begin`/`census:end`
markers): per runtime, the releases read, and per grammar rule the census formats it reads with the first and the
last release printing them; then the excused rows by reason and the rows still without a verdict.

    python3 scripts/census/coverage.py     # after census.py, or after editing census/*.verdicts.toml

It reads only the repository (census/*.tsv, census/*.verdicts.toml); the verdicts' precedence is the test's
(tests/census.rs): a read, then an exact excuse, then a pattern of the text, then a class.
"""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "log-formats.md"
RUNTIMES = ["vllm", "sglang", "llama.cpp"]
NAMES = {"vllm": "vLLM", "sglang": "SGLang", "llama.cpp": "llama.cpp"}


def unescape(cell):
    out, i = [], 0
    while i < len(cell):
        c = cell[i]
        if c == "\\" and i + 1 < len(cell):
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(cell[i + 1], cell[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def rows(runtime):
    lines = (ROOT / "census" / f"{runtime}.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, map(unescape, line.split("\t")))) for line in lines[1:]]


def section(runtime):
    releases = [l.split("\t") for l in (ROOT / "census" / f"{runtime}.releases.tsv").read_text().splitlines()[1:]]
    order = {r[0]: i for i, r in enumerate(releases)}
    v = tomllib.loads((ROOT / "census" / f"{runtime}.verdicts.toml").read_text())
    read = {r["format"]: r["rule"] for r in v.get("read", [])}
    excused = {f: e["reason"] for e in v.get("excuse", []) for f in e["formats"]}
    classes = v.get("class", [])
    patterns = [(p, [re.compile(m) for m in p["matches"]]) for p in v.get("pattern", [])]

    def pattern(row):
        for p, res in patterns:
            if (
                (not p.get("files") or any(row["file"].startswith(f) for f in p["files"]))
                and (not p.get("levels") or row["level"] in p["levels"])
                and any(r.search(row["format"]) for r in res)
            ):
                return p["reason"]
        return None

    def klass(row):
        for c in classes:
            if (not c.get("files") or any(row["file"].startswith(f) for f in c["files"])) and (
                not c.get("levels") or row["level"] in c["levels"]
            ):
                return c["reason"]
        return None

    by_rule, by_reason, open_rows = {}, {}, 0
    for row in rows(runtime):
        span = (order[row["first"]], order[row["last"]])
        if row["format"] in read:
            first, last, n = by_rule.get(read[row["format"]], (span[0], span[1], 0))
            by_rule[read[row["format"]]] = (min(first, span[0]), max(last, span[1]), n + 1)
        elif row["format"] in excused or pattern(row) or klass(row):
            reason = excused.get(row["format"]) or pattern(row) or klass(row)
            kind = "row" if row["format"] in excused else "pattern" if pattern(row) else "class"
            by_reason[(kind, reason)] = by_reason.get((kind, reason), 0) + 1
        else:
            open_rows += 1
    total = sum(n for *_, n in by_rule.values()) + sum(by_reason.values()) + open_rows
    out = [
        f"### {NAMES[runtime]}",
        "",
        f"{len(releases)} releases read, {releases[0][0]} ({releases[0][1]}) to {releases[-1][0]} ({releases[-1][1]}); "
        f"{total} census rows: {sum(n for *_, n in by_rule.values())} read, {sum(by_reason.values())} excused, "
        f"{open_rows} without a verdict.",
        "",
        "| rule | rows | first release | last release |",
        "|---|---|---|---|",
    ]
    for rule, (first, last, n) in sorted(by_rule.items(), key=lambda kv: (kv[1][0], kv[0])):
        out.append(f"| `{rule}` | {n} | {releases[first][0]} | {releases[last][0]} |")
    out += ["", "| excused because | by | rows |", "|---|---|---|"]
    for (kind, reason), n in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"| {reason.replace('|', '/')} | {kind} | {n} |")
    return "\n".join(out) + "\n"


def main():
    text = DOC.read_text()
    begin, end = "<!-- census:begin -->", "<!-- census:end -->"
    body = "\n".join(section(r) for r in RUNTIMES)
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    DOC.write_text(head + begin + "\n" + body + end + tail)


if __name__ == "__main__":
    main()
