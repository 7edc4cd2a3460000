#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): `cargo install --locked` vramdiff from the action's own
# checkout (VRAMDIFF_SOURCE, the ref of `uses: …@REF`), or from VRAMDIFF_REPOSITORY at VRAMDIFF_REF when a ref
# is given. VRAMDIFF_DRY_RUN=1 prints the command instead of running it (scripts/check-action.sh).
set -euo pipefail

if [ -n "${VRAMDIFF_REF:-}" ]; then
  : "${VRAMDIFF_REPOSITORY:?VRAMDIFF_REPOSITORY must name the git repository to install from}"
  # --rev takes a commit, a tag or a branch: cargo fetches the named refs when it is not a hash.
  command=(cargo install --locked --git "$VRAMDIFF_REPOSITORY" --rev "$VRAMDIFF_REF" vramdiff)
else
  source_dir="${VRAMDIFF_SOURCE:-$(cd "$(dirname "$0")/.." && pwd)}"
  command=(cargo install --locked --path "$source_dir")
fi

if [ "${VRAMDIFF_DRY_RUN:-}" = 1 ]; then
  printf '%s\n' "${command[*]}"
  exit 0
fi
command -v cargo >/dev/null || { echo "vramdiff action: cargo is not installed (use a Rust toolchain action first)" >&2; exit 2; }
"${command[@]}"
vramdiff --version
