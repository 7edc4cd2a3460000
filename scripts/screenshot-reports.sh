#!/usr/bin/env bash
# Headless Chromium screenshots of the two founding cases' HTML reports, checked for size and non-blank
# pixels (scripts/check_screenshot.py). Writes OUT/<case>.png (the pages themselves are the goldens
# reports/<case>.log.html); `reports/screenshots/` keeps the committed ones (regenerate with
# `scripts/screenshot-reports.sh reports/screenshots`).
# Chromium runs with no network use of its own: no sync, no component updates, a fresh empty profile.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/screenshots}"
bin="${VRAMDIFF:-target/debug/vramdiff}"
browser="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$browser" ] || { echo "chromium not found" >&2; exit 1; }
mkdir -p "$out"
pages="$(mktemp -d)"
trap 'rm -rf "$pages"' EXIT
width=1280
height=4200
# SHOT_HEIGHT=N SHOT_COLOURS=a,b shoot …: a shorter window for a short report (the check counts non-blank pixels
# of the window), and the chart colours it must show (scripts/check_screenshot.py).
shoot() {
  local name="$1"; shift
  local h="${SHOT_HEIGHT:-$height}"
  "$bin" --format html --fail-on never "$@" > "$pages/$name.html"
  if grep -Eq 'https?://' "$pages/$name.html"; then
    echo "$name.html: an external URL" >&2; exit 1
  fi
  local profile
  profile="$(mktemp -d)"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --force-color-profile=srgb \
    --screenshot="$(cd "$out" && pwd)/$name.png" --window-size="$width,$h" \
    "file://$pages/$name.html" > /dev/null 2>&1
  rm -rf "$profile"
  python3 scripts/check_screenshot.py "$out/$name.png" "$width" "$h" 0.05 \
    "${SHOT_COLOURS:-estimated,actual,weights}"
}
shoot founding-k80-gemma3-12b sample-logs/founding-k80-gemma3-12b.log \
  --smi sample-logs/founding-k80-gemma3-12b.nvidia-smi.txt
shoot founding-today-3090-4060-gemma4-31b sample-logs/founding-today-3090-4060-gemma4-31b.log
# What a server held while it served (issue 54): the timeline chart of llama-server's prompt cache and checkpoints.
SHOT_HEIGHT=1300 SHOT_COLOURS="weights,KV cache" shoot serving-1201-llama-server-checkpoints-prompt-cache \
  sample-logs/1201-llama-server-rtx5090-gemma4-12b-np1-ctx256k-checkpoints-7-to-10-prompt-cache-2223mib.log
