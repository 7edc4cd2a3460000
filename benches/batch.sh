#!/usr/bin/env bash
# Benchmark `vramdiff batch` on a synthetic CI corpus (benches/gen_ci_corpus.py): files/s and MB/s with 1 and
# 2 threads, and peak RSS. Usage: bash benches/batch.sh [COUNT] (default 10000). Not a test: nothing asserts.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10000}"
data="target/bench-data/ci-corpus-$count"
cargo build --release --locked --quiet
if [ ! -d "$data" ]; then
  python3 benches/gen_ci_corpus.py "$data" --count "$count"
fi
bytes=$(find "$data" -type f -name '*.log' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
gz=$(find "$data" -type f -name '*.gz' | wc -l)
files=$(find "$data" -type f | wc -l)
echo "corpus: $files files ($gz gzip), $((bytes / 1000000)) MB of plain logs (+ gzip), $(nproc) cores"
printf '%-8s %10s %10s %10s %12s\n' threads seconds files/s MB/s peak_RSS_MB
for t in 1 2; do
  out=$(mktemp -d)
  /usr/bin/time -f '%e %M' -o "$out/time" ./target/release/vramdiff batch "$data" --threads "$t" --quiet --out "$out/results" > /dev/null 2>&1
  read -r secs rss < "$out/time"
  awk -v t="$t" -v s="$secs" -v f="$files" -v b="$bytes" -v r="$rss" \
    'BEGIN { printf "%-8s %10.2f %10.0f %10.1f %12.1f\n", t, s, f / s, b / 1e6 / s, r / 1024 }'
  rm -rf "$out"
done
