#!/usr/bin/env python3
"""How selective a stage-one factor set could be (issue 38, docs/performance.md "Speed II").

For every minimal key (a literal containing no other) of the parser's search (every grammar anchor and memory word,
target/bench-data/anchors.txt as benches/run.sh writes it) or of the skim's (those plus framing's literals and the
capture starts, src/frame/skim.rs, src/smi/mod.rs), pick 4-byte factors greedily: the window that costs least per
key it newly covers, cost = (its count in a frequency corpus + BIAS); keys of 4 bytes or fewer are their own
factor. Then count, on a log, the lines holding a factor against the lines holding a key (the lines stage two
would verify for nothing) and say how many factors there are (Teddy takes at most 128 a searcher, vramdiff's
src/prefilter/mod.rs at most 48 then).

    python3 benches/factors.py parser samples 5 target/bench-data/mix-20M.log
    python3 benches/factors.py skim input 50 target/bench-data/mix-20M.log

`samples`: 4-gram counts over sample-logs/*.log (what a static table could hold); `input`: over the log's first
20,000 lines, which are then not counted (an upper bound: the frequencies of the very input).
"""
import collections, glob, re, sys

what, freq_from, bias, log = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
literals = [l.rstrip("\n") for l in open("target/bench-data/anchors.txt") if l.strip("\n")]
if what == "skim":
    literals += ["time=", "level=", "\x1b", "\0", "==> ", "msg=", "NVSMI LOG", "<?xml", "nvidia_smi_log", "memory",
                 "ROCm System Management Interface", "GPU[", '"card', "NVIDIA-SMI ", "GPU  Name"]
keys = sorted(set(literals))
keys = [k for k in keys if not any(len(o) < len(k) and o in k for o in keys)]
lines = open(log, errors="replace").read().split("\n")
freq = collections.Counter()
if freq_from == "input":
    corpus, lines = lines[:20000], lines[20000:]
else:
    corpus = [l for p in sorted(glob.glob("sample-logs/*.log")) for l in open(p, errors="replace")]
for l in corpus:
    for i in range(len(l) - 3):
        freq[l[i:i + 4]] += 1
W = 4
factors = {k for k in keys if len(k) <= W}
uncovered = {k for k in keys if len(k) > W and not any(f in k for f in factors)}
windows = collections.defaultdict(set)
for k in uncovered:
    for i in range(len(k) - W + 1):
        windows[k[i:i + W]].add(k)
while uncovered:
    best = min((w for w in windows if windows[w] & uncovered),
               key=lambda w: ((freq[w] + bias) / len(windows[w] & uncovered), w))
    factors.add(best)
    uncovered -= windows[best]
key_re = re.compile("|".join(map(re.escape, keys)))
factor_re = re.compile("|".join(map(re.escape, sorted(factors))))
if what == "parser":  # the parser sees the framed lines only: slog records and the lines holding a key
    lines = [l for l in lines if "time=" in l or "level=" in l or key_re.search(l)]
with_factor = sum(1 for l in lines if factor_re.search(l))
with_key = sum(1 for l in lines if key_re.search(l))
print(f"{len(keys)} keys, {len(factors)} factors; {len(lines)} lines, {with_factor} with a factor, {with_key} with a key")
