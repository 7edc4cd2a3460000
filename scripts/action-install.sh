#!/usr/bin/env bash
# The GitHub Action's install step (action.yml). When the ref is a release tag (vX.Y.Z: the `ref` input, else
# the `uses: …@REF` of the action itself), download that release's binary for this runner (the archive
# .github/workflows/release.yml attached, checked against its SHA-256) and put it on the PATH: seconds, no Rust
# toolchain. Otherwise, or when the release has no archive for this runner, build it: `cargo install --locked`
# from the action's own checkout (VRAMDIFF_SOURCE), or from VRAMDIFF_REPOSITORY at VRAMDIFF_REF when a ref is
# given. VRAMDIFF_DRY_RUN=1 prints what it would do instead (scripts/check-action.sh).
set -euo pipefail

release_tag() { [[ "$1" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; }

# The Rust target of the release archive that runs on this runner (musl on Linux: static, any distribution).
runner_target() {
  local os="${RUNNER_OS:-$(uname -s)}" arch="${RUNNER_ARCH:-$(uname -m)}"
  case "$os/$arch" in
    Linux/X64 | Linux/x86_64) echo x86_64-unknown-linux-musl ;;
    Linux/ARM64 | Linux/aarch64) echo aarch64-unknown-linux-musl ;;
    macOS/X64 | Darwin/x86_64) echo x86_64-apple-darwin ;;
    macOS/ARM64 | Darwin/arm64) echo aarch64-apple-darwin ;;
    Windows/X64) echo x86_64-pc-windows-msvc ;;
    *) return 1 ;;
  esac
}

tag="" repository=""
if [ -n "${VRAMDIFF_REF:-}" ]; then
  : "${VRAMDIFF_REPOSITORY:?VRAMDIFF_REPOSITORY must name the git repository to install from}"
  release_tag "$VRAMDIFF_REF" && tag="$VRAMDIFF_REF" repository="$VRAMDIFF_REPOSITORY"
elif [ -n "${VRAMDIFF_ACTION_REF:-}" ] && [ -n "${VRAMDIFF_ACTION_REPOSITORY:-}" ]; then
  release_tag "$VRAMDIFF_ACTION_REF" && tag="$VRAMDIFF_ACTION_REF" repository="https://github.com/$VRAMDIFF_ACTION_REPOSITORY"
fi

if [ -n "$tag" ] && target="$(runner_target)"; then
  case "$target" in *windows*) suffix=.zip ;; *) suffix=.tar.gz ;; esac
  name="vramdiff-${tag#v}-$target"
  url="${repository%/}/releases/download/$tag/$name$suffix"
  if [ "${VRAMDIFF_DRY_RUN:-}" = 1 ]; then
    printf 'download %s\n' "$url"
    exit 0
  fi
  dir="${RUNNER_TEMP:-$(mktemp -d)}/vramdiff-$tag"
  mkdir -p "$dir"
  if curl -fsSL --retry 3 -o "$dir/$name$suffix" "$url" && curl -fsSL --retry 3 -o "$dir/$name$suffix.sha256" "$url.sha256"; then
    (cd "$dir" && { sha256sum -c "$name$suffix.sha256" 2>/dev/null || shasum -a 256 -c "$name$suffix.sha256"; }) >/dev/null ||
      { echo "vramdiff action: $url does not match its SHA-256" >&2; exit 2; }
    case "$suffix" in
      .zip) (cd "$dir" && unzip -q -o "$name$suffix") ;;
      *) tar -C "$dir" -xzf "$dir/$name$suffix" ;;
    esac
    echo "$dir/$name" >> "${GITHUB_PATH:-/dev/null}"
    "$dir/$name/vramdiff" --version
    exit 0
  fi
  echo "vramdiff action: no release archive at $url; building from source instead" >&2
fi

if [ -n "${VRAMDIFF_REF:-}" ]; then
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
