#!/usr/bin/env bash
# Run fuzz targets for a bounded time each (default 60 s), one after the other, on the stable toolchain, then
# minimise what they found into the corpus kept in the repository (fuzz/corpus/<target>/). fuzz/README.md has
# the targets and the campaign figures.
#
#   fuzz/run.sh [seconds] [target...]
#
# SMOKE=1 (what fuzz/smoke.sh and CI set): fuzz on the kept corpus and the seeds, change nothing in the
# checkout, and exit non-zero on the first crash, hang or out-of-memory. MINIMISE=1: no fuzzing, only minimise
# the kept corpus again. MAX_LEN=bytes caps an input (default 64 KiB). Crashes land in
# fuzz/artifacts/<target>/ (ignored by git); keep each one as a regression test (tests/bad_input.rs or a unit
# test) before fixing it. Each run's full libFuzzer output is in fuzz/work/<target>.log.
#
# The kept corpus is what the fuzzer found beyond the seeds (which are cut from the repository's logs afresh
# on every run, so they need no copy), minimised, then its largest inputs dropped until it fits KEEP_KIB
# (default 384 KiB per target): a few MB in all.
#
# Stable, not nightly: cargo-fuzz passes `-Z` flags to rustc, which RUSTC_BOOTSTRAP=1 allows on a stable
# toolchain. Without a sanitizer (`--sanitizer none`, which needs no nightly-only runtime) libFuzzer still
# sees every panic Rust raises: out-of-bounds indexing, `unwrap`, and (with `--debug-assertions`) integer
# overflow.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
targets=("$@")
all=(frame parse_line values smi ledger pipeline read_ahead gguf ps diff mcp fetch)
if [ ${#targets[@]} -eq 0 ]; then
  targets=("${all[@]}")
fi
smoke="${SMOKE:-0}"
samples=../sample-logs
export RUSTC_BOOTSTRAP=1
export CARGO_TERM_COLOR=never

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz missing: cargo install cargo-fuzz --locked" >&2
  cargo install cargo-fuzz --locked
fi

# Seeds, made afresh on every run in fuzz/seeds/<target>/ (ignored by git): whole files for the stream
# targets, single lines for the line targets, field values for the value parsers, capture files (with a mode
# byte) for the smi readers, the GGUF fixtures, /api/ps replies.
logs() {
  for f in "$samples"/* ../tests/fixtures/* ../tests/data/follow/* ../tests/data/peer-vectors/*.input; do
    case "$f" in *.expect.toml | *.expected.json | */README.md) continue ;; esac # answers, not logs
    [ -f "$f" ] && printf '%s\n' "$f"
  done
}
seed() {
  local dir="seeds/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  case "$1" in
    frame | pipeline | read_ahead | ledger)
      logs | while read -r f; do head -c 32768 "$f" > "$dir/$(basename "$f")"; done
      ;;
    diff)
      # Two logs joined by a NUL: old and new. A log against itself, and neighbours against each other.
      local prev=""
      while read -r f; do
        case "$f" in *.log) ;; *) continue ;; esac
        { head -c 16384 "$f"; printf '\0'; head -c 16384 "${prev:-$f}"; } > "$dir/$(basename "$f")"
        prev="$f"
      done < <(logs)
      ;;
    parse_line)
      logs | xargs cat | awk 'length($0) < 4096' | sort -u | head -n 4000 | split -l 1 - "$dir/line-"
      ;;
    values)
      printf '%s\n' '6.8 GiB' '"[11.1 GiB 11.1 GiB]"' '[]' '4403.49 MiB' '0 B' '595.49 MB' '9866MiB' '1,48' \
        '[24 25]' '-1' '37[ID:0 Layers:20(0..19) ID:1 Layers:17(20..36)]' \
        '{Operation:commit LoraPath:[] Parallel:1 GPULayers:20[ID:GPU-1 Layers:20(28..47)] KvCacheType: }' \
        | split -l 1 - "$dir/value-"
      logs | xargs grep -h 'msg=' | awk 'length($0) < 4096' | sort -u | head -n 500 | split -l 1 - "$dir/logfmt-"
      ;;
    smi)
      local rocm_text rocm_json
      rocm_text="$(printf '%s\n' '======================= ROCm System Management Interface =======================' \
        '============================= Memory Usage (Bytes) =============================' \
        'GPU[0]		: VRAM Total Memory (B): 17163091968' 'GPU[0]		: VRAM Total Used Memory (B): 9663676416' \
        '================================================================================' \
        '============================= End of ROCm SMI Log ==============================')"
      rocm_json='{"card0": {"VRAM Total Memory (B)": "17163091968", "VRAM Total Used Memory (B)": "1048576"}, "card1": {"VRAM Total Memory (B)": "8573157376", "VRAM Total Used Memory (B)": "0"}}'
      printf '%s\n' "$rocm_text" > "$dir/rocm.txt.src"
      printf '%s\n' "$rocm_json" > "$dir/rocm.json.src"
      for f in "$samples"/*nvidia-smi* "$samples"/*nvsmi* "$samples"/*ci-with-smi* "$dir"/*.src; do
        case "$f" in *.expect.toml) continue ;; esac
        [ -f "$f" ] || continue
        for mode in 0 1 2; do
          { printf "\\x$(printf %02x "$mode")"; head -c 65536 "$f"; } > "$dir/$mode-$(basename "$f")"
        done
      done
      rm -f "$dir"/*.src
      ;;
    gguf)
      # The fixtures written by llama.cpp's gguf package (tests/data/gguf), whole and cut after the header.
      for f in ../tests/data/gguf/*.gguf ../tests/data/gguf-headers/*.gguf; do
        head -c 65536 "$f" > "$dir/$(basename "$f")"
        head -c 4096 "$f" > "$dir/head-$(basename "$f")"
      done
      ;;
    ps)
      # /api/ps replies in the shape of Ollama's API documentation (the one tests/follow.rs's server sends).
      printf '%s' '{"models":[]}' > "$dir/empty"
      printf '%s' '{"models":[{"name":"llama3.1:70b","model":"llama3.1:70b","size":45000000000,"digest":"a80c4f17acd5","details":{"format":"gguf","family":"llama","parameter_size":"70.6B","quantization_level":"Q4_0"},"expires_at":"2024-06-04T14:38:31.83753-07:00","size_vram":42000000000,"context_length":4096}]}' > "$dir/one"
      printf '%s' '{"models":[{"name":"a:1b","size":1,"size_vram":0},{"name":"b:70b","size":45000000000,"size_vram":41000000000,"context_length":null},{"name":"c","size":9223372036854775807,"size_vram":-9223372036854775808}]}' > "$dir/three"
      ;;
    mcp)
      # JSON-RPC messages an agent's client sends: each tool called on a sample, malformed calls, the handshake.
      local log='sample-logs/founding-k80-gemma3-12b.log' n=0
      for params in \
        '{"name":"analyze_log","arguments":{"path":"'"$log"'"}}' \
        '{"name":"analyze_log","arguments":{"text":"time=2025 level=INFO msg=x\n","nvidia_smi":"| 0 Tesla K80 |","format":"markdown"}}' \
        '{"name":"whatif","arguments":{"path":"'"$log"'","gpus":[0,1],"ctx":8192,"kv_type":"q8_0","parallel":2}}' \
        '{"name":"whatif","arguments":{"text":"x","max_ctx":true,"gguf":"hf://o/r/m.gguf","ubatch":512,"ngl":99}}' \
        '{"name":"inspect_model","arguments":{"model":"-h","mmproj":"--version","tensors":true}}' \
        '{"name":"doctor","arguments":{"log":"--x","ollama":"http://127.0.0.1:11434","capture":"none","timeout_seconds":2.5,"issue":true}}' \
        '{"name":"doctor"}' '{"name":"whatif","arguments":{"path":"l","gpus":[],"gpu_count":1}}'; do
        n=$((n + 1))
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' "$n" "$params" > "$dir/call-$n"
      done
      printf '%s' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}' > "$dir/initialize"
      printf '%s' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' > "$dir/list"
      ;;
    fetch)
      # A mode byte (0: http://, 1: hf://, 2: ollama://; +128: --allow-full-download), an address line, then
      # the replies: a 206 range reply cut from each oracle fixture, a 200 without ranges, a redirect, a 416.
      for f in ../tests/data/oracle/b11549/models/*.gguf; do
        local size
        size="$(wc -c < "$f")"
        {
          printf '\x00https://huggingface.co/org/repo/resolve/main/%s\n' "$(basename "$f")"
          printf 'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-%d/%d\r\nContent-Length: %d\r\nETag: "e"\r\n\r\n' \
            $((size - 1)) "$size" "$size"
          cat "$f"
        } > "$dir/range-$(basename "$f")"
        {
          printf '\x81hf://org/repo@v1/m.gguf\n'
          printf 'HTTP/1.1 302 Found\r\nLocation: https://cdn.example/x\r\nContent-Length: 0\r\n\r\n\0\0\0'
          printf 'HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n' "$size"
          head -c 65536 "$f"
        } > "$dir/full-$(basename "$f")"
      done
      printf '\x02ollama://gemma3:12b\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 120\r\n\r\n{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:aa","size":4}]}\0\0\0HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\n\r\n' > "$dir/ollama"
      ;;
  esac
}

# One build for every target, in fuzz/target/ (`cargo fuzz run` would rebuild, and stall, if the sources
# change meanwhile: the built binaries are run directly).
flags=(-O --debug-assertions --sanitizer none)
nice -n 19 cargo fuzz build "${flags[@]}"
bin_dir="target/$(rustc -vV | sed -n 's/^host: //p')/release"
max_len="${MAX_LEN:-65536}"
keep_kib="${KEEP_KIB:-384}"
mkdir -p artifacts work
status=0
for t in "${targets[@]}"; do
  [ -x "$bin_dir/$t" ] || { echo "no fuzz target '$t' (targets: ${all[*]})" >&2; exit 2; }
  seed "$t"
  mkdir -p "corpus/$t" "artifacts/$t"
  # New inputs go to a scratch directory (ignored by git); the kept corpus and the seeds are read only.
  new="work/$t"
  log="work/$t.log"
  rm -rf "$new"
  mkdir -p "$new"
  if [ "${MINIMISE:-0}" != 1 ]; then
    echo "== $t: ${seconds}s on $(find "corpus/$t" -type f | wc -l) kept inputs and $(find "seeds/$t" -type f | wc -l) seeds"
    if ! nice -n 19 "$bin_dir/$t" "$new" "corpus/$t" "seeds/$t" -artifact_prefix="artifacts/$t/" \
        -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        > "$log" 2>&1; then
      grep -v '^#[0-9]' "$log" | grep -v '^"' | tail -n 40
      echo "!! $t: crash, hang or out-of-memory: see fuzz/artifacts/$t/ and fuzz/$log" >&2
      status=1
      [ "$smoke" = 1 ] && exit 1
      continue
    fi
    # The figures: the last status line (cov: edges, ft: features, corp: inputs/bytes) and the run count.
    echo "   $(grep -E '^#[0-9]+' "$log" | tail -n 1)"
    echo "   $(grep -E 'stat::(number_of_executed_units|peak_rss_mb)' "$log" | tr -s ' ' | tr '\n' ' ')"
  fi
  if [ "$smoke" != 1 ]; then
    # What `cargo fuzz cmin` does (libFuzzer's -merge=1), into a folder that starts with the seeds: an input
    # is kept when it adds coverage the seeds and the inputs kept before it lack. Then the seeds go.
    kept="work/$t.min"
    rm -rf "$kept"
    cp -r "seeds/$t" "$kept"
    nice -n 19 "$bin_dir/$t" -merge=1 "$kept" "corpus/$t" "$new" -max_len="$max_len" -rss_limit_mb=2048 \
      -timeout=10 > "work/$t.merge.log" 2>&1 || { echo "!! $t: merge failed: fuzz/work/$t.merge.log" >&2; status=1; continue; }
    (cd "seeds/$t" && find . -type f) | while read -r f; do rm -f "$kept/$f"; done
    # Past the budget, drop the largest inputs (coverage is lost, the corpus stays valid).
    find "$kept" -type f -printf '%s %p\n' | sort -n |
      awk -v budget=$((keep_kib * 1024)) '{ total += $1; if (total > budget) { sub(/^[0-9]+ /, ""); print } }' |
      while read -r f; do rm -f "$f"; done
    rm -rf "corpus/$t"
    mv "$kept" "corpus/$t"
    echo "   kept: $(find "corpus/$t" -type f | wc -l) inputs, $(du -sk --apparent-size "corpus/$t" | cut -f1) KiB"
  fi
  rm -rf "$new"
done
exit $status
