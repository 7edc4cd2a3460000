#!/usr/bin/env python3
"""Generate a large synthetic CI corpus for `vramdiff batch` from the real sample logs.

Each generated log is one of the sample logs that hold a model load, with every size it prints
(`… MiB`, `… GiB`, `size="…"`) multiplied by a random factor (±15 %, the same factor for the whole log so
estimate and buffers stay consistent, plus ±3 % per line so the actual/estimated ratios vary), and one log in
ten gzip-compressed. Deterministic for a given seed.

    python3 benches/gen_ci_corpus.py OUT_DIR [--count 10000] [--seed 1]
"""
import argparse
import gzip
import os
import random
import re

TEMPLATES = [
    "001-kaggle-t4-llama31-8b.log",
    "002-runpod-rtx4090-llama31-8b-lora.log",
    "004-windows-rocm-780m-gemma3-27b-newengine.log",
    "008-macos-metal-m1pro-granite-8b-128k-partial.log",
    "012-journald-rocm-strixhalo-gfx1151-gptoss-120b-newengine.log",
    "201-macos-metal-m1pro-granite8b-full-mdquote.log",
    "founding-k80-gemma3-12b.log",
    "026-journald-container-2gpu-kv-compute-actual.log",
]

SIZE = re.compile(r"(\d+(?:\.\d+)?)(\s?)(MiB|GiB)")


def vary(text: str, rng: random.Random) -> str:
    whole = rng.uniform(0.85, 1.15)

    def one(m: re.Match) -> str:
        value = float(m.group(1)) * whole * rng.uniform(0.97, 1.03)
        decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
        return f"{value:.{decimals}f}{m.group(2)}{m.group(3)}"

    return "\n".join(SIZE.sub(one, line) for line in text.split("\n"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sample-logs")
    templates = [open(os.path.join(here, t), encoding="utf-8", errors="replace").read() for t in TEMPLATES]
    rng = random.Random(args.seed)
    total = 0
    for i in range(args.count):
        k = rng.randrange(len(templates))
        text = vary(templates[k], rng)
        folder = os.path.join(args.out, f"run-{i // 1000:03d}")
        os.makedirs(folder, exist_ok=True)
        name = os.path.join(folder, f"{i:05d}-{TEMPLATES[k]}")
        data = text.encode("utf-8")
        total += len(data)
        if rng.random() < 0.1:
            with open(name + ".gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
                f.write(data)
        else:
            with open(name, "wb") as f:
                f.write(data)
    print(f"{args.count} logs, {total / 1e6:.1f} MB uncompressed, in {args.out}")


if __name__ == "__main__":
    main()
