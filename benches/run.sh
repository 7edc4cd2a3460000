#!/usr/bin/env bash
# Throughput benchmark: vramdiff against `grep -c -F` on the grammar's own anchor literals and memory words.
#
#   bash benches/run.sh            # all inputs, 5 runs each
#   RUNS=3 INPUTS="journald-100M" bash benches/run.sh
#   BIN=/tmp/vramdiff-old bash benches/run.sh   # time another build on the same inputs
#
# Builds --release, generates the inputs into target/bench-data/ if missing (benches/gen.py, seeded, from
# sample-logs/), and prints one Markdown table row per input: size, vramdiff --format json wall time (median of
# RUNS), MB/s (10^6 bytes per second), peak RSS, grep time on the same file, vramdiff/grep, and ripgrep when
# installed. Timings are whole-process wall times of one single-threaded process each.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
DATA=${DATA:-target/bench-data}
INPUTS=${INPUTS:-"journald-10M journald-100M journald-1G llama-1G longlines-100M"}
BIN=${BIN:-target/release/vramdiff} # another build to compare (e.g. a copy of an older one)

cargo build --release --locked --quiet
mkdir -p "$DATA"

for input in $INPUTS; do
    file="$DATA/$input.log"
    if [[ ! -f $file ]]; then
        kind=${input%-*}
        size=${input##*-}
        echo "generating $file ..." >&2
        python3 benches/gen.py "$kind" "$size" "$file"
    fi
done

# Every anchor literal of the built-in grammar plus the memory words (src/parse/mod.rs): the lines grep finds
# are exactly the lines vramdiff's prefilter must hand on, so both do the same search.
ANCHORS="$DATA/anchors.txt"
python3 - "$ANCHORS" <<'EOF'
import glob, re, sys, tomllib
seen = []
for path in sorted(glob.glob("grammars/*.toml")):
    with open(path, "rb") as f:
        for rule in tomllib.load(f).get("rule", []):
            seen += [a for a in rule["anchors"] if a not in seen]
words = re.search(r"MEMORY_WORDS: &\[&str\] = &\[(.*?)\];", open("src/parse/mod.rs").read(), re.S)
seen += [w for w in re.findall(r'"((?:[^"\\]|\\.)*)"', words.group(1)) if w not in seen]
with open(sys.argv[1], "w") as f:
    f.write("".join(a + "\n" for a in seen))
EOF

# "MEDIAN_WALL_SECONDS PEAK_RSS_KB MEDIAN_CPU_SECONDS" over RUNS runs of "$@" (CPU = user + sys, steadier than
# wall time when something else runs on the machine). Output goes to a file, not /dev/null: GNU grep stops at
# the first match when it sees its output is /dev/null.
measure() {
    local start end runs
    runs=$(for _ in $(seq "$RUNS"); do
        start=$(date +%s%N)
        /usr/bin/time -f "%M %U %S" -o "$DATA/.rss" "$@" > "$DATA/.out" || true
        end=$(date +%s%N)
        echo "$(((end - start) / 1000)) $(tail -n 1 "$DATA/.rss")"
    done)
    median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
    echo "$(awk '{print $1 / 1e6}' <<< "$runs" | median)" \
        "$(awk '{print $2}' <<< "$runs" | sort -g | tail -n 1)" \
        "$(awk '{print $3 + $4}' <<< "$runs" | median)"
}

have_rg=0
command -v rg > /dev/null && have_rg=1

printf '| input | size | vramdiff wall s | MB/s | CPU s | MB/s (CPU) | peak RSS | grep -c -F wall s | vramdiff / grep (wall) |%s\n' \
    "$( ((have_rg)) && echo ' rg -c -F wall s |')"
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|%s\n' "$( ((have_rg)) && echo '---:|')"
for input in $INPUTS; do
    file="$DATA/$input.log"
    bytes=$(stat -c %s "$file")
    cat "$file" > /dev/null # warm the page cache
    read -r v rss cpu < <(measure "$BIN" --format json "$file")
    read -r g _ _ < <(measure grep -c -F -f "$ANCHORS" "$file")
    row=$(awk -v b="$bytes" -v v="$v" -v c="$cpu" -v g="$g" -v rss="$rss" -v name="$input" 'BEGIN {
        printf "| %s | %.1f MB | %.3f | %.0f | %.2f | %.0f | %.1f MB | %.3f | %.2f |",
            name, b / 1e6, v, b / 1e6 / v, c, b / 1e6 / (c > 0 ? c : 0.01), rss / 1024, g, v / g }')
    if ((have_rg)); then
        read -r r _ _ < <(measure rg -c -F -f "$ANCHORS" "$file")
        row="$row $(printf "%.3f" "$r") |"
    fi
    echo "$row"
done
((have_rg)) || echo "(ripgrep not installed: rg column skipped)"
