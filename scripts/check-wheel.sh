#!/usr/bin/env bash
# The Python wheel (pyproject.toml, maturin `bindings = "bin"`), as a user without Rust gets it: build this
# platform's wheel, install it into a fresh virtualenv, and check that the `vramdiff` it puts on the PATH prints
# the founding sample's report byte for byte as the cargo build does (text and JSON), and answers `mcp`.
# CI builds the wheel from the dev profile: the binary is the one cargo already built for the tests, so only
# vramdiff itself is linked again (a dist build here would compile every crate again, optimised: many minutes);
# the release workflow builds the published wheels with the dist profile (.github/workflows/release.yml).
#
#   scripts/check-wheel.sh [PROFILE]     (default: dev)
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-dev}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "check-wheel: $*" >&2; exit 1; }

python3 -m venv "$work/build"
"$work/build/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.7,<2"
"$work/build/bin/maturin" build --quiet --profile "$profile" --out "$work/wheels" >/dev/null
wheel="$(ls "$work"/wheels/vramdiff-*.whl)"
python3 -m venv "$work/user"
"$work/user/bin/pip" install --quiet --disable-pip-version-check "$wheel"
installed="$work/user/bin/vramdiff"
[ -x "$installed" ] || fail "the wheel put no vramdiff in the virtualenv's bin/"

case "$profile" in dev) cargo_bin=target/debug/vramdiff ;; *) cargo_bin="target/$profile/vramdiff" ;; esac
founding=sample-logs/founding-today-3090-4060-gemma4-31b.log
for format in text json; do
  "$cargo_bin" --format "$format" "$founding" > "$work/cargo.$format" || [ $? = 1 ]
  "$installed" --format "$format" "$founding" > "$work/wheel.$format" || [ $? = 1 ]
  cmp -s "$work/cargo.$format" "$work/wheel.$format" || fail "the wheel's $format report differs from $cargo_bin's"
done
[ "$("$installed" --version)" = "$("$cargo_bin" --version)" ] || fail "versions differ"
"$installed" mcp --help >/dev/null || fail "the wheel's vramdiff has no mcp command"
echo "check-wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) installs a vramdiff that prints the founding report as $cargo_bin does"
