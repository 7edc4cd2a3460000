#!/usr/bin/env bash
# Memory of a long `vramdiff -f`: one million lines holding 1,000 loads (the founding log, 36 lines with its
# server start, padded to 1,000 lines per load with [GIN] request lines) are appended to a followed file in
# batches; VmRSS is read from /proc after the first 10 loads are reported and again after all 1,000, with VmHWM
# (the peak). Finished loads are not kept, so the two should be within a few MB. Not a test: nothing asserts.
# Usage: bash benches/follow_memory.sh. VRAMDIFF=path picks the binary (default: a release build, made here).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${VRAMDIFF:-}"
if [ -z "$bin" ]; then
  cargo build --release --locked --quiet
  bin=target/release/vramdiff
fi
work=$(mktemp -d)
trap 'kill -INT "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/block.log" <<'PY'
import sys
log = open("sample-logs/founding-k80-gemma3-12b.log", encoding="utf-8").read().splitlines()
gin = '[GIN] 2025/07/20 - 09:43:48 | 200 | 22.297513877s |       127.0.0.1 | POST     "/api/generate"'
with open(sys.argv[1], "w", encoding="utf-8") as out:
    out.write("\n".join(log + [gin] * (1000 - len(log))) + "\n")
PY
: > "$work/server.log"
"$bin" -f --format jsonl --fail-on never "$work/server.log" > "$work/out.jsonl" 2> "$work/err.txt" &
pid=$!
status() { grep -E "^$1:" "/proc/$pid/status" | awk '{print $2}'; }
wait_for() { while [ "$(wc -l < "$work/out.jsonl")" -lt "$1" ]; do sleep 0.05; done; }
append() { for _ in $(seq 1 "$1"); do cat "$work/block.log"; done >> "$work/server.log"; }
append 10
wait_for 10
rss_start=$(status VmRSS)
hwm_start=$(status VmHWM)
start=$(date +%s)
for batch in $(seq 1 99); do
  append 10
  wait_for $((10 + batch * 10))
done
end=$(date +%s)
rss_end=$(status VmRSS)
hwm_end=$(status VmHWM)
lines=$(wc -l < "$work/server.log")
loads=$(wc -l < "$work/out.jsonl")
echo "$bin: $lines lines, $loads loads reported, $((end - start)) s for the last 990"
echo "after 10 loads:    VmRSS $((rss_start / 1024)) MB ($rss_start kB), VmHWM $((hwm_start / 1024)) MB"
echo "after $loads loads:  VmRSS $((rss_end / 1024)) MB ($rss_end kB), VmHWM $((hwm_end / 1024)) MB"
echo "growth: $(( (rss_end - rss_start) / 1024 )) MB ($((rss_end - rss_start)) kB)"
