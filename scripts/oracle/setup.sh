#!/usr/bin/env bash
# Create a Python venv with the pinned packages the oracle suite needs:
#   xllamacpp 2026.10.11549 (llama.cpp build b11549 with its server, CPU-only wheel), gguf 0.19.0, numpy.
# Usage: bash scripts/oracle/setup.sh VENV_DIR
set -euo pipefail
venv="${1:?usage: setup.sh VENV_DIR}"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    "xllamacpp==2026.10.11549" "gguf==0.19.0" numpy
"$venv/bin/python" -c "import xllamacpp, gguf, numpy; print('oracle venv ready: xllamacpp', xllamacpp.__version__)"
