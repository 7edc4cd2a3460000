#!/usr/bin/env bash
# The GitHub Action's run step (action.yml), driven by its inputs as environment variables:
#   VRAMDIFF_LOGS      log paths or globs, one per line or space-separated (required)
#   VRAMDIFF_FAIL_ON   info | warning | error (default) | never
#   VRAMDIFF_FORMAT    the step log's format: text (default) | markdown | json | junit
#   VRAMDIFF_JUNIT     also write JUnit XML here (optional)
#   VRAMDIFF_BASELINE  an earlier run's log: also `vramdiff diff BASELINE LOG --fail-on-regression` (optional,
#                      needs exactly one log)
#   VRAMDIFF_BIN       the binary (default: vramdiff on PATH; `.ci/run` points it at target/debug/vramdiff)
# The Markdown report (and the comparison) go to $GITHUB_STEP_SUMMARY with --summary; the exit status is the
# worst of the runs (2 error > 1 gate failed > 0), also written as `exit-code` to $GITHUB_OUTPUT when set.
set -uo pipefail

bin="${VRAMDIFF_BIN:-vramdiff}"
fail_on="${VRAMDIFF_FAIL_ON:-error}"
format="${VRAMDIFF_FORMAT:-text}"

# Split the input into patterns (on newlines when it has several lines, so paths may hold spaces; else on
# blanks) without expanding them yet, then expand each: a glob that matches nothing is named and dropped, a
# plain path is kept as it is (vramdiff names it if it is missing).
case "${VRAMDIFF_LOGS:-}" in
  *$'\n'*) IFS=$'\n' ;;
esac
set -f
patterns=(${VRAMDIFF_LOGS:-})
set +f
shopt -s nullglob globstar
files=()
for pattern in "${patterns[@]}"; do
  [ -n "$pattern" ] || continue
  matched=($pattern)
  if [ ${#matched[@]} -eq 0 ]; then
    case "$pattern" in
      *[*?[]*) echo "vramdiff action: '$pattern' matches no file" >&2 ;;
      *) matched=("$pattern") ;;
    esac
  fi
  files+=("${matched[@]}")
done
shopt -u nullglob
IFS=$' \t\n'

worst=0
note() { # keep the worst exit status
  if [ "$1" -gt "$worst" ]; then worst="$1"; fi
}
finish() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "exit-code=$worst" >> "$GITHUB_OUTPUT"
  fi
  exit "$worst"
}

if [ ${#files[@]} -eq 0 ]; then
  echo "vramdiff action: no log to read (input 'logs': '${VRAMDIFF_LOGS:-}')" >&2
  worst=2
  finish
fi

"$bin" --summary --fail-on "$fail_on" --format "$format" "${files[@]}"
note $?

if [ -n "${VRAMDIFF_JUNIT:-}" ]; then
  # The same gate, so the same exit status: already counted above.
  "$bin" --format junit --fail-on "$fail_on" "${files[@]}" > "$VRAMDIFF_JUNIT"
  status=$?
  if [ "$status" -eq 2 ]; then note 2; fi
fi

if [ -n "${VRAMDIFF_BASELINE:-}" ]; then
  if [ ${#files[@]} -ne 1 ]; then
    echo "vramdiff action: 'baseline' compares with one log, got ${#files[@]}" >&2
    note 2
  else
    "$bin" diff --summary --fail-on-regression --format "$format" "$VRAMDIFF_BASELINE" "${files[0]}"
    note $?
  fi
fi

finish
