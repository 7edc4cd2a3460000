#!/usr/bin/env bash
# Throughput benchmark: vramdiff against `grep -c -F` and `rg -c -F` on the grammar's own anchor literals and
# memory words, in the same interleaved rounds, then `vramdiff batch` with 1 and 2 threads.
#
#   bash benches/run.sh            # all inputs, 5 rounds each, then batch on 2,000 logs
#   RUNS=3 INPUTS="mix-200M journald-1G" BATCH=0 bash benches/run.sh
#   BEFORE=/tmp/vramdiff-main bash benches/run.sh   # time another build in the same rounds, beside this one
#   ONE_CORE=1 bash benches/run.sh   # also vramdiff on one core (`taskset -c 0`), against grep -F's time
#   INPUTS=corpusmix-200M bash benches/run.sh   # the corpus logs (benches/corpus/) between the noise
#
# Builds --release, generates the inputs into target/bench-data/ if missing (benches/gen.py, seeded, from
# sample-logs/; `mix` is the samples between journald noise, about 1 line in 60 a memory line), installs
# ripgrep with apt if missing, says the machine's load, and prints one Markdown table row per input: size,
# vramdiff --format json wall and CPU time (medians of RUNS rounds, each round running every tool once), MB/s
# of CPU time, peak RSS, grep's and rg's times on the same file and how they compare. On a shared machine the
# ratios of CPU times are the figures to read. With rg, it also times `rg -c -F` on the eleven memory literals a
# user would type to find memory lines (benches/memory-literals.txt, copied from the team's bench references,
# issue 38's two-core goal) and says vramdiff's wall time against it.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
DATA=${DATA:-target/bench-data}
INPUTS=${INPUTS:-"mix-200M journald-10M journald-100M journald-1G llama-1G longlines-100M"}
BIN=${BIN:-target/release/vramdiff} # another build to time (e.g. a copy of an older one)
BEFORE=${BEFORE:-}                   # a second build timed in the same rounds (e.g. main's), in its own columns
ONE_CORE=${ONE_CORE:-0}              # 1: vramdiff on one core too (taskset -c 0), in its own columns
# The eleven memory literals of issue 38, one a line and nothing else (rg -f reads every line as a literal):
# copied unchanged on 2026-12-03 from the team's bench references (shared/bench/memory-literals.txt).
MEMORY=benches/memory-literals.txt

cargo build --release --locked --quiet
mkdir -p "$DATA"

for input in $INPUTS; do
    file="$DATA/$input.log"
    if [[ ! -f $file ]]; then
        kind=${input%-*}
        size=${input##*-}
        echo "generating $file ..." >&2
        if [[ $kind == corpusmix ]]; then
            # The corpus logs between journald noise (issue 38), copied into benches/corpus/ with INDEX.tsv.
            python3 benches/gen.py mix "$size" "$file" --logs "${CORPUS:-benches/corpus}"
        else
            python3 benches/gen.py "$kind" "$size" "$file"
        fi
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

# One run of "$@": "WALL_SECONDS PEAK_RSS_KB CPU_SECONDS" (CPU = user + sys, steadier than wall time when
# something else runs on the machine). Output goes to a file, not /dev/null: GNU grep stops at the first match
# when it sees its output is /dev/null.
once() {
    local start end
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$DATA/.rss" "$@" > "$DATA/.out" 2> /dev/null || true
    end=$(date +%s%N)
    awk -v ns="$((end - start))" '{print ns / 1e9, $1, $2 + $3}' < <(tail -n 1 "$DATA/.rss")
}

# The median of column $1 of stdin, or the maximum with `max`.
median() { awk -v c="$1" '{print $c}' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
maximum() { awk -v c="$1" '{print $c}' | sort -g | tail -n 1; }

# ripgrep from apt when it is missing (the comparison needs it); skipped if it cannot be installed.
if ! command -v rg > /dev/null && command -v apt-get > /dev/null; then
    echo "installing ripgrep ..." >&2
    apt-get install -y -qq ripgrep > /dev/null 2>&1 || true
fi
have_rg=0
command -v rg > /dev/null && have_rg=1

echo "machine load: $(uptime | sed 's/.*load average/load average/'), $(nproc) cores; $RUNS interleaved rounds, medians"
printf '| input | size | vramdiff wall s | CPU s | MB/s (CPU) | peak RSS |%s grep -F wall s | CPU s | × grep (wall) | × grep (CPU) |%s\n' \
    "$([[ -n $BEFORE ]] && echo ' before wall s | CPU s | peak RSS |')" \
    "$( ((have_rg)) && echo ' rg -F wall s | CPU s | × rg (CPU) | rg -F memory wall s | × rg memory (wall) |')$( ((ONE_CORE)) && echo ' one core wall s | CPU s | × grep (one core, wall) |')"
printf '|---|---:|---:|---:|---:|---:|%s---:|---:|---:|---:|%s%s\n' \
    "$([[ -n $BEFORE ]] && echo '---:|---:|---:|')" "$( ((have_rg)) && echo '---:|---:|---:|---:|---:|')" \
    "$( ((ONE_CORE)) && echo '---:|---:|---:|')"
for input in $INPUTS; do
    file="$DATA/$input.log"
    bytes=$(stat -c %s "$file")
    cat "$file" > /dev/null # warm the page cache
    : > "$DATA/.v"; : > "$DATA/.b"; : > "$DATA/.g"; : > "$DATA/.r"; : > "$DATA/.m"; : > "$DATA/.1"
    # Interleaved: each round runs every tool once, so a change in the machine's load hits them alike.
    for _ in $(seq "$RUNS"); do
        once "$BIN" --format json "$file" >> "$DATA/.v"
        [[ -n $BEFORE ]] && once "$BEFORE" --format json "$file" >> "$DATA/.b"
        once grep -c -F -f "$ANCHORS" "$file" >> "$DATA/.g"
        ((have_rg)) && once rg -c -F -f "$ANCHORS" "$file" >> "$DATA/.r"
        ((have_rg)) && once rg -c -F -f "$MEMORY" "$file" >> "$DATA/.m"
        ((ONE_CORE)) && once taskset -c 0 "$BIN" --format json "$file" >> "$DATA/.1"
    done
    v=$(median 1 < "$DATA/.v"); vc=$(median 3 < "$DATA/.v"); rss=$(maximum 2 < "$DATA/.v")
    g=$(median 1 < "$DATA/.g"); gc=$(median 3 < "$DATA/.g")
    row=$(awk -v b="$bytes" -v v="$v" -v c="$vc" -v rss="$rss" -v name="$input" 'BEGIN {
        printf "| %s | %.1f MB | %.3f | %.2f | %.0f | %.1f MB |", name, b / 1e6, v, c, b / 1e6 / (c > 0 ? c : 0.01), rss / 1024 }')
    if [[ -n $BEFORE ]]; then
        row="$row $(awk -v w="$(median 1 < "$DATA/.b")" -v c="$(median 3 < "$DATA/.b")" -v r="$(maximum 2 < "$DATA/.b")" \
            'BEGIN { printf "%.3f | %.2f | %.1f MB |", w, c, r / 1024 }')"
    fi
    row="$row $(awk -v g="$g" -v gc="$gc" -v v="$v" -v c="$vc" 'BEGIN {
        printf "%.3f | %.2f | %.2f | %.2f |", g, gc, g / v, gc / (c > 0 ? c : 0.01) }')"
    if ((have_rg)); then
        row="$row $(awk -v r="$(median 1 < "$DATA/.r")" -v rc="$(median 3 < "$DATA/.r")" -v c="$vc" 'BEGIN {
            printf "%.3f | %.2f | %.2f |", r, rc, rc / (c > 0 ? c : 0.01) }')"
        row="$row $(awk -v m="$(median 1 < "$DATA/.m")" -v v="$v" 'BEGIN { printf "%.3f | %.2f |", m, m / v }')"
    fi
    if ((ONE_CORE)); then
        row="$row $(awk -v w="$(median 1 < "$DATA/.1")" -v c="$(median 3 < "$DATA/.1")" -v g="$g" \
            'BEGIN { printf "%.3f | %.2f | %.2f |", w, c, g / w }')"
    fi
    echo "$row"
done
((have_rg)) || echo "(ripgrep not installed: rg columns skipped)"
echo "(× grep, × rg: the other tool's time over vramdiff's, so 1.0 is grep's speed and more is faster)"

# `vramdiff batch`: files per second with 1 and 2 threads (benches/batch.sh), unless BATCH=0.
if [[ ${BATCH:-1} != 0 ]]; then
    bash benches/batch.sh "${BATCH_COUNT:-2000}"
fi
