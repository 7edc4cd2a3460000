#!/usr/bin/env bash
# The oracle suite against the real llama.cpp (issue 50; tests/data/oracle/README.md): install the pinned
# xllamacpp into a virtualenv (once), run the real server on every configuration into target/oracle, and check
# vramdiff against those fresh logs with the same tests that read the committed ones (tests/oracle.rs).
#
#   bash scripts/oracle/check.sh           # every configuration (CI)
#   bash scripts/oracle/check.sh --quick   # a dozen runs, and only the checks that need no pair of runs
#
# A fresh machine needs only python3 with venv and PyPI. ORACLE_VENV names the virtualenv (default
# target/oracle-venv, reused when it already has the pinned packages).
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${ORACLE_VENV:-target/oracle-venv}"
if ! "$venv/bin/python" -c 'import xllamacpp, gguf, numpy; assert xllamacpp.__version__ == "2026.10.11549"' 2>/dev/null; then
  rm -rf "$venv"
  bash scripts/oracle/setup.sh "$venv"
fi

rm -rf target/oracle
"$venv/bin/python" scripts/oracle/run.py target/oracle "$@"

filters=(oracle::)
if [ "${1:-}" = --quick ]; then
  # The quick subset has no pairs of runs: the whatif levers need the full suite.
  filters=(oracle::every_run_reconciles oracle::a_refused_setting oracle::inspect_weights)
fi
VRAMDIFF_ORACLE_DIR=target/oracle cargo test --locked --test integration -- "${filters[@]}"
# The results as a table beside the fresh logs (docs/oracle.md is the same table for the committed ones).
python3 scripts/oracle/table.py target/oracle target/debug/vramdiff > target/oracle/results.md
echo "oracle results: target/oracle/results.md"
