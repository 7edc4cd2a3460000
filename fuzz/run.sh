#!/usr/bin/env bash
# Run every fuzz target for a bounded time (default 60 s each), one after the other, with seed corpora cut
# from sample-logs/. Not part of CI: needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`). Crashes land in fuzz/artifacts/<target>/; keep each one as a regression
# test (tests/bad_input.rs or a unit test) before fixing it.
#
#   fuzz/run.sh [seconds] [target...]      (MAX_LEN=bytes caps an input; default 256 KiB)
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(frame parse_line values smi pipeline gguf)
fi
samples=../sample-logs

# Seeds: whole sample files for the stream targets, single lines for the line targets, field values for
# the value parsers, capture files (with a mode byte) for the smi scanner. Made once; libFuzzer adds to them.
seed() {
  local dir="corpus/$1"
  [ -d "$dir" ] && return 0
  mkdir -p "$dir"
  case "$1" in
    frame|pipeline)
      for f in "$samples"/*; do
        [ "$(basename "$f")" = README.md ] && continue
        case "$f" in *.expect.toml) continue ;; esac # the tests' answers, not logs
        head -c 65536 "$f" > "$dir/$(basename "$f")"
      done
      ;;
    parse_line)
      cat "$samples"/*.log | awk 'length($0) < 4096' | sort -u | head -n 4000 | split -l 1 - "$dir/line-"
      ;;
    values)
      printf '%s\n' '6.8 GiB' '"[11.1 GiB 11.1 GiB]"' '[]' '4403.49 MiB' '0 B' '595.49 MB' '9866MiB' '1,48' \
        '[24 25]' '-1' '37[ID:0 Layers:20(0..19) ID:1 Layers:17(20..36)]' \
        '{Operation:commit LoraPath:[] Parallel:1 GPULayers:20[ID:GPU-1 Layers:20(28..47)] KvCacheType: }' \
        | split -l 1 - "$dir/value-"
      grep -h 'msg=' "$samples"/*.log | awk 'length($0) < 4096' | sort -u | head -n 500 | split -l 1 - "$dir/logfmt-"
      ;;
    smi)
      for f in "$samples"/*nvidia-smi* "$samples"/*nvsmi* "$samples"/*ci-with-smi*; do
        case "$f" in *.expect.toml) continue ;; esac
        for mode in 0 1 2; do
          { printf "\\x$(printf %02x "$mode")"; head -c 65536 "$f"; } > "$dir/$mode-$(basename "$f")"
        done
      done
      ;;
    gguf)
      # The fixtures written by llama.cpp's gguf package (tests/data/gguf), whole and cut after the header.
      for f in ../tests/data/gguf/*.gguf; do
        cp "$f" "$dir/$(basename "$f")"
        head -c 8192 "$f" > "$dir/head-$(basename "$f")"
      done
      ;;
  esac
}

cargo +nightly fuzz build -O
# Run the built binaries directly: `cargo fuzz run` would rebuild (and stall) if the sources change meanwhile.
bin_dir="target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
mkdir -p artifacts
status=0
for t in "${targets[@]}"; do
  seed "$t"
  echo "== $t: ${seconds}s"
  mkdir -p "artifacts/$t"
  if ! "$bin_dir/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" \
      -max_total_time="$seconds" -max_len="${MAX_LEN:-262144}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      2>&1 | grep -v '^#[0-9]' | tail -n 30; then
    status=1
  fi
done
exit $status
