#!/usr/bin/env bash
# Run the GitHub Action's steps (action.yml → scripts/action-install.sh, scripts/action-run.sh) locally, as
# `.ci/run` does after the tests: the run step on the sample logs with GITHUB_STEP_SUMMARY and GITHUB_OUTPUT
# pointing at temporary files, checking what they received and every exit status; the install step as a dry
# run (the command it would run for each input). Uses target/debug/vramdiff (VRAMDIFF_BIN to change).
set -euo pipefail
cd "$(dirname "$0")/.."

export VRAMDIFF_BIN="${VRAMDIFF_BIN:-$PWD/target/debug/vramdiff}"
[ -x "$VRAMDIFF_BIN" ] || { echo "check-action: build vramdiff first ($VRAMDIFF_BIN)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
founding=sample-logs/founding-k80-gemma3-12b.log
grown=tests/fixtures/founding-k80-gemma3-12b-cuda1-weights-plus-1gib.log

fail() { echo "check-action: $*" >&2; exit 1; }

# run_step NAME EXPECTED_STATUS VAR=VALUE…: the run step with the action's inputs as its environment.
run_step() {
  local name="$1" expected="$2"
  shift 2
  export GITHUB_STEP_SUMMARY="$work/$name.summary.md" GITHUB_OUTPUT="$work/$name.output"
  : > "$GITHUB_OUTPUT"
  local status=0
  env -u VRAMDIFF_LOGS -u VRAMDIFF_FAIL_ON -u VRAMDIFF_FORMAT -u VRAMDIFF_JUNIT -u VRAMDIFF_BASELINE "$@" \
    bash scripts/action-run.sh > "$work/$name.stdout" 2> "$work/$name.stderr" || status=$?
  [ "$status" = "$expected" ] || fail "$name: exit $status, expected $expected ($(cat "$work/$name.stderr"))"
  grep -qx "exit-code=$expected" "$GITHUB_OUTPUT" || fail "$name: GITHUB_OUTPUT lacks exit-code=$expected"
}

# The default gate (error): the founding case has warnings only. The summary gets the Markdown report.
run_step default 0 VRAMDIFF_LOGS="sample-logs/founding-k80-*.log" VRAMDIFF_JUNIT="$work/junit.xml"
grep -q '^# vramdiff report' "$work/default.summary.md" || fail "default: no Markdown report in the summary"
grep -q 'needless-split' "$work/default.summary.md" || fail "default: the summary lacks the findings"
# The glob took both founding logs (the plain and the CI one with nvidia-smi): two suites in the JUnit file.
[ "$(grep -c '<testsuite ' "$work/junit.xml")" = 2 ] || fail "default: the glob did not give two logs"
grep -q '^Load 1: sample-logs/founding-k80' "$work/default.stdout" || fail "default: no text report on stdout"

# The warning gate fails the step; the summary is written all the same.
run_step warning 1 VRAMDIFF_LOGS="$founding" VRAMDIFF_FAIL_ON=warning VRAMDIFF_FORMAT=markdown
grep -q '^# vramdiff report' "$work/warning.summary.md" || fail "warning: no summary"

# A baseline: the diff's regression fails the step and its Markdown joins the summary.
run_step regression 1 VRAMDIFF_LOGS="$grown" VRAMDIFF_BASELINE="$founding"
grep -q '^## vramdiff diff' "$work/regression.summary.md" || fail "regression: no diff in the summary"
grep -q 'REGRESSION.* CUDA1: more VRAM used' "$work/regression.summary.md" || fail "regression: CUDA1 not named"
run_step unchanged 0 VRAMDIFF_LOGS="$founding" VRAMDIFF_BASELINE="$founding"
grep -q 'result: no change' "$work/unchanged.summary.md" || fail "unchanged: the diff did not say no change"

# Paths one per line may hold spaces.
cp "$founding" "$work/with space.log"
run_step spaces 0 VRAMDIFF_LOGS="$work/with space.log
$founding"
[ "$(grep -c '^## Load' "$work/spaces.summary.md")" = 2 ] || fail "spaces: two logs expected in the summary"

# Errors: a glob matching nothing, a missing file.
run_step nomatch 2 VRAMDIFF_LOGS="no-such-folder/*.log"
grep -q 'matches no file' "$work/nomatch.stderr" || fail "nomatch: not named"
run_step missing 2 VRAMDIFF_LOGS="no-such-file.log"
grep -q 'no-such-file.log' "$work/missing.stderr" || fail "missing: not named"

# The install step, dry run: install_says EXPECTED VAR=VALUE… (the environment of the step).
install_says() {
  local expected="$1" out
  shift
  out="$(env -u VRAMDIFF_REF -u VRAMDIFF_ACTION_REF -u VRAMDIFF_ACTION_REPOSITORY VRAMDIFF_DRY_RUN=1 "$@" bash scripts/action-install.sh)"
  [ "$out" = "$expected" ] || fail "install: '$out', expected '$expected'"
}
# The action's own checkout by default, a git ref when given (a branch or a commit builds).
install_says "cargo install --locked --path /action" VRAMDIFF_SOURCE=/action
install_says "cargo install --locked --git https://example.org/vramdiff --rev main vramdiff" \
  VRAMDIFF_REF=main VRAMDIFF_REPOSITORY=https://example.org/vramdiff
install_says "cargo install --locked --path /action" VRAMDIFF_ACTION_REF=main VRAMDIFF_ACTION_REPOSITORY=someone/vramdiff \
  VRAMDIFF_SOURCE=/action
# A release tag downloads the release's archive for the runner (the `ref` input, else the action's own ref).
install_says "download https://example.org/vramdiff/releases/download/v0.2.0/vramdiff-0.2.0-x86_64-unknown-linux-musl.tar.gz" \
  VRAMDIFF_REF=v0.2.0 VRAMDIFF_REPOSITORY=https://example.org/vramdiff RUNNER_OS=Linux RUNNER_ARCH=X64
install_says "download https://github.com/someone/vramdiff/releases/download/v1.2.3/vramdiff-1.2.3-aarch64-apple-darwin.tar.gz" \
  VRAMDIFF_ACTION_REF=v1.2.3 VRAMDIFF_ACTION_REPOSITORY=someone/vramdiff RUNNER_OS=macOS RUNNER_ARCH=ARM64
install_says "download https://github.com/someone/vramdiff/releases/download/v1.2.3/vramdiff-1.2.3-x86_64-pc-windows-msvc.zip" \
  VRAMDIFF_ACTION_REF=v1.2.3 VRAMDIFF_ACTION_REPOSITORY=someone/vramdiff RUNNER_OS=Windows RUNNER_ARCH=X64
# The archive the download names is the one the release workflow makes.
grep -qF 'vramdiff-$version-$target' scripts/release-archive.sh || fail "release-archive.sh names its archives otherwise"

# action.yml calls exactly these scripts with these inputs.
for needle in 'scripts/action-install.sh' 'scripts/action-run.sh' 'VRAMDIFF_LOGS: ${{ inputs.logs }}' \
  'VRAMDIFF_FAIL_ON: ${{ inputs.fail-on }}' 'VRAMDIFF_BASELINE: ${{ inputs.baseline }}' 'using: composite'; do
  grep -qF "$needle" action.yml || fail "action.yml lacks '$needle'"
done
if python3 -c 'import yaml' 2>/dev/null; then
  python3 -c 'import sys, yaml; a = yaml.safe_load(open("action.yml")); assert a["runs"]["using"] == "composite"; assert {"logs", "fail-on", "format", "junit", "baseline", "ref"} <= set(a["inputs"])'
fi
echo "check-action: the action's steps passed (run: 7 cases, install: 6)"
