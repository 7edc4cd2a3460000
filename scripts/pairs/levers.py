#!/usr/bin/env python3
"""The levers' measured error on every pair of loads in the repository's real logs (issue 53), written into
docs/findings.md between its `<!-- levers:begin -->` and `<!-- levers:end -->` markers.

A pair is two loads of one model and runtime whose settings differ; vramdiff replays the first with the second's
settings and sets the prediction beside what the second measured (the report's `pairs[]`). The pairs read here:
every lever of tests/data/oracle/levers.json (two real llama.cpp runs given together), every bundled sample
log with two or more loads of one model (sample-logs/), and the bundled files that hold runs of one model (FILE_PAIRS).

    python3 scripts/pairs/levers.py target/debug/vramdiff

Run from the repository root. Standard library only.
"""

import json
import subprocess
import sys
from pathlib import Path

MIB = 1024 * 1024
BEGIN, END = "<!-- levers:begin -->", "<!-- levers:end -->"
# The levers the replay has per runtime (src/pairs/settings.rs); a lever no real pair below changed is unverified,
# and the report says so beside its prediction (src/pairs/settings.rs, UNVERIFIED).
LLAMA_LEVERS = ["ctx", "parallel", "ubatch", "kv-type", "ngl", "flash-attention"]
# Real oracle runs that differ in a setting no `whatif` flag sets (levers.json lists those it has): read together.
ORACLE_PAIRS = [["llama-gqa--ctx4096", "llama-gqa--faoff"], ["llama-gqa--faon-ctx8192", "llama-gqa--faoff-ctx8192"],
                ["gemma3--baseline", "gemma3--faoff"], ["llama-gqa--faoff", "llama-gqa--ctx4096"]]
LEVERS = {
    "Ollama's estimator": LLAMA_LEVERS,
    "Ollama's engine": LLAMA_LEVERS,
    "Ollama with llama-server --fit": LLAMA_LEVERS,
    "llama.cpp": LLAMA_LEVERS,
    "vLLM": ["gpu-memory-utilization", "max-model-len"],
    "SGLang": ["mem-fraction-static", "context-length"],
}
# The runtimes whose loads the replay models (src/model/runtime.rs, `Runtime::name`).
# Real runs of one model kept in two bundled files (sample-logs/README.md): read together.
FILE_PAIRS = [["sample-logs/008-macos-metal-m1pro-granite-8b-128k-partial.log",
               "sample-logs/201-macos-metal-m1pro-granite8b-full-mdquote.log"]]
RUNTIMES = ["Ollama's estimator", "Ollama's engine", "Ollama with llama-server --fit", "llama.cpp", "vLLM", "SGLang"]


def pairs_of(binary, *logs):
    out = subprocess.run([binary, *logs, "--format", "json"], capture_output=True, text=True,
                         env={"VRAMDIFF_NO_MODEL_SEARCH": "1", "PATH": "/usr/bin:/bin"})
    if out.returncode not in (0, 1):
        sys.exit(f"vramdiff {' '.join(logs)} failed: {out.stderr}")
    return json.loads(out.stdout).get("pairs", [])


def main():
    binary = sys.argv[1]
    seen, inputs = set(), []
    levers = json.loads(Path("tests/data/oracle/levers.json").read_text())["levers"]
    for lever in levers:
        key = (lever["from"], lever["to"])
        if key not in seen:
            seen.add(key)
            inputs.append([f"tests/data/oracle/b11549/logs/{run}.log" for run in key])
    for expect in sorted(Path("sample-logs").glob("*.expect.toml")):
        if any(line.strip() in (f"loads = {n}" for n in range(2, 100)) for line in expect.read_text().splitlines()):
            inputs.append([str(expect)[: -len(".expect.toml")]])
    inputs += [[f"tests/data/oracle/b11549/logs/{run}.log" for run in pair] for pair in ORACLE_PAIRS]
    inputs += FILE_PAIRS
    rows = {}
    for logs in inputs:
        for pair in pairs_of(binary, *logs):
            settings = ", ".join(c["setting"] for c in pair["changed"]) or "not in the log"
            for f in pair["figures"]:
                if f.get("device") is not None and any(
                    g.get("device") is None and g["component"] == f["component"] for g in pair["figures"]
                ):
                    continue
                key = (settings, pair["runtime"], f["component"])
                r = rows.setdefault(key, {"pairs": 0, "predicted": 0, "within": 0, "worst": None, "why": set()})
                r["pairs"] += 1
                if "predicted" in f and "measured" in f:
                    r["predicted"] += 1
                    r["within"] += f["verdict"] == "within-rounding"
                    if f["verdict"] in ("over", "under") and f["measured"]["bytes"] > 0:
                        pct = 100.0 * f["error"] / f["measured"]["bytes"]
                        if r["worst"] is None or abs(pct) > abs(r["worst"]):
                            r["worst"] = pct
                r["why"].update(f.get("not_modelled", []))
    out = [BEGIN, "",
           "| setting changed | runtime | figure | pairs | predicted | within the rounding | worst error beyond it |",
           "| :--- | :--- | :--- | ---: | ---: | ---: | ---: |"]
    for (settings, runtime, component), r in sorted(rows.items()):
        worst = "–" if r["worst"] is None else f"{r['worst']:+.1f} %"
        out.append(f"| {settings} | {runtime} | {component} | {r['pairs']} | {r['predicted']} | {r['within']} | {worst} |")
    # A lever is verified on a runtime when a real pair changed it and a figure it moves was predicted.
    verified = {(runtime, s) for (settings, runtime, _), r in rows.items() if r["predicted"] > 0
                for s in settings.split(", ")}
    lines = []
    for runtime in RUNTIMES:
        done = [f"`{lever}`" for lever in LEVERS[runtime] if (runtime, lever) in verified]
        missing = [f"`{lever}`" for lever in LEVERS[runtime] if (runtime, lever) not in verified]
        paired = sum(r["pairs"] for (_, rt, c), r in rows.items() if rt == runtime and c == "kv")
        words = f"- {runtime}: {paired} real pair{'s' if paired != 1 else ''}; "
        words += ("verified " + ", ".join(done) if done else "no lever verified")
        words += ("; unverified " + ", ".join(missing) if missing else "") + "."
        lines.append(words)
    out += ["", f"Pairs read: {len(inputs)} inputs (the oracle's levers, the bundled logs with two loads or more, "
            "and the bundled files of one model's runs). A lever is verified on a runtime when a real pair changed "
            "it and a figure it moves was predicted; the report calls the prediction of any other lever of that "
            "runtime unverified (text, Markdown, HTML; `unverified` in the JSON and the pairs table):", ""]
    out += lines
    out += ["", END]
    doc = Path("docs/findings.md")
    text = doc.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    doc.write_text(text[:start] + "\n".join(out) + text[end:])


if __name__ == "__main__":
    main()
