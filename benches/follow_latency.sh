#!/usr/bin/env bash
# How long `vramdiff -f` takes to report a load once its last line is in the followed file: a follower is
# started on an empty file, the founding log (one load) is appended N times at once, and the time from each
# append to its JSON line on stdout is measured (polled every 2 ms). Not a test: nothing asserts.
# Usage: bash benches/follow_latency.sh [N] (default 20). VRAMDIFF=path picks the binary (default: a release
# build, made here; VRAMDIFF=target/debug/vramdiff skips the build). MODE=stdin follows a pipe (a FIFO kept
# open, as `journalctl -f |` is) instead of a file.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20}"
bin="${VRAMDIFF:-}"
if [ -z "$bin" ]; then
  cargo build --release --locked --quiet
  bin=target/release/vramdiff
fi
work=$(mktemp -d)
trap 'kill -INT "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
: > "$work/server.log"
mode="${MODE:-file}"
if [ "$mode" = stdin ]; then
  mkfifo "$work/pipe"
  "$bin" -f --format jsonl --fail-on never < "$work/pipe" > "$work/out.jsonl" 2> "$work/err.txt" &
  pid=$!
  exec 3> "$work/pipe"
else
  "$bin" -f --format jsonl --fail-on never "$work/server.log" > "$work/out.jsonl" 2> "$work/err.txt" &
  pid=$!
fi
feed() { if [ "$mode" = stdin ]; then cat "$1" >&3; else cat "$1" >> "$work/server.log"; fi; }
sleep 1
lines() { wc -l < "$work/out.jsonl"; }
declare -a ms
for i in $(seq 1 "$n"); do
  # A quiet second or so between loads, as on a server: the follower is polling a drained file when the load
  # lands. The pause is random, so that it does not keep the same phase against the 200 ms poll.
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", 1 + r / 32768 * 0.4 }')"
  t0=$(date +%s%N)
  feed sample-logs/founding-k80-gemma3-12b.log
  while [ "$(lines)" -lt "$i" ]; do sleep 0.002; done
  t1=$(date +%s%N)
  ms+=($(( (t1 - t0) / 1000000 )))
done
printf '%s\n' "${ms[@]}" | sort -n | awk -v bin="$bin" -v mode="$mode" '
  { v[NR] = $1; s += $1 }
  END { printf "%s (%s): %d loads, latency from append to report: min %d ms, median %d ms, mean %.0f ms, max %d ms\n",
        bin, mode, NR, v[1], v[int((NR + 1) / 2)], s / NR, v[NR] }'
