#!/usr/bin/env bash
# CI's fuzz smoke run (.ci/run calls it): every target for a few seconds (default 20) on the corpus kept in
# fuzz/corpus/ and the seeds, on the stable toolchain; installs cargo-fuzz when it is missing. Changes nothing
# in the checkout; a crash, hang or out-of-memory fails it (the input is left in fuzz/artifacts/<target>/).
#
#   fuzz/smoke.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")"
# libFuzzer is C++, built by libfuzzer-sys: a fresh CI machine may have the Rust toolchain and no C++ compiler.
if ! command -v c++ >/dev/null && [ "${CI:-}" = true ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && apt-get install -y -qq g++; } >/dev/null 2>&1 || echo "could not install g++" >&2
fi
SMOKE=1 exec bash ./run.sh "${1:-20}"
