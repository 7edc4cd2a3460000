#!/usr/bin/env bash
# Make vLLM's and SGLang's own logging code print the lines they print while
# serving (engine stats, preemptions, prefill/decode batches, retractions) and
# write them to tests/data/serving-printed/. Not run in CI: it downloads five
# wheels (~1.3 GB) from PyPI; the printed lines are committed. Re-run it to check
# them: the output is byte-identical from run to run (fixed clock and pid,
# scripts/serving_print/common.py).
#
# Usage: bash scripts/serving_print/print.sh [WORK_DIR]   (default target/serving-print)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$repo/target/serving-print}"
out="$repo/tests/data/serving-printed"
mkdir -p "$work/wheels" "$work/src" "$out"

# The runtimes: their wheels only (no dependencies), unpacked.
for spec in vllm==0.7.2 vllm==0.9.2 vllm==0.10.2 vllm==0.34.0 sglang==0.4.0 sglang==0.5.23; do
    name="${spec%%==*}"; version="${spec##*==}"
    if [ ! -d "$work/src/$name-$version" ]; then
        pip download --quiet --no-deps --disable-pip-version-check "$spec" -d "$work/wheels"
        mkdir -p "$work/src/$name-$version"
        unzip -q -o "$work/wheels/$name-$version-"*.whl "$name/*.py" -d "$work/src/$name-$version"
    fi
done

# The pure-Python packages the printing modules import and really run (pinned);
# torch, CUDA kernels, tokenizers and the like are stubbed (stubs.py).
if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
        msgspec==0.23.0 numpy==2.4.6 orjson==3.13.0 packaging==26.4 prometheus_client==0.26.0 \
        psutil==7.2.2 pydantic==2.14.4 PyYAML==6.0.4 pyzmq==27.3.0 regex==2026.12.2 \
        requests==2.34.2 cachetools==8.0.3 cloudpickle==3.1.3 sentencepiece==0.2.3 \
        setproctitle==1.3.8 tqdm==4.70.1 typing_extensions==4.16.0
fi

py="$work/venv/bin/python"
here="$repo/scripts/serving_print"
# Each call: driver, unpacked wheel, printer, output file, the lines kept (the
# runtime's start-up warnings about the stubbed packages are dropped; vLLM
# logs to stdout, SGLang to stderr, both are read).
run() {
    local driver="$1" src="$2" which="$3" file="$4" keep="$5"
    ( cd "$here" && TZ=UTC NO_COLOR= "$py" "$driver" "$work/src/$src" "$which" 2>&1 ) \
        | grep -E "$keep" > "$out/$file"
    echo "$file: $(wc -l < "$out/$file") line(s) from $src ($driver $which)"
}
run vllm_early.py  vllm-0.9.2   v1           vllm-0.9.2-v1-stats.log         'loggers\.py'
run vllm_early.py  vllm-0.9.2   v0           vllm-0.9.2-v0-stats.log         'metrics\.py'
run vllm_early.py  vllm-0.9.2   preempt      vllm-0.9.2-v0-preempted.log     'scheduler\.py'
run vllm_early.py  vllm-0.10.2  v1-apiserver vllm-0.10.2-v1-stats-804.log    'loggers\.py'
run vllm_early.py  vllm-0.7.2   v0-802       vllm-0.7.2-v0-stats-preempted-802.log 'metrics\.py|scheduler\.py'
run vllm_034.py    vllm-0.34.0  stats        vllm-0.34.0-v1-stats.log        'loggers\.py'
run sglang_040.py  sglang-0.4.0  stats       sglang-0.4.0-stats.log          'TP0\]'
run sglang_040.py  sglang-0.4.0  retract     sglang-0.4.0-retract.log        'TP0\]'
run sglang_0523.py sglang-0.5.23 stats       sglang-0.5.23-stats.log         'TP0\]'
run sglang_0523.py sglang-0.5.23 retract     sglang-0.5.23-retract.log       'TP0\]'
