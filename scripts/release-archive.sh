#!/usr/bin/env bash
# One release archive (.github/workflows/release.yml): `cargo build --locked --profile dist --target TARGET`,
# then vramdiff-VERSION-TARGET.tar.gz (.zip for Windows) holding vramdiff-VERSION-TARGET/{vramdiff, README.md,
# CHANGELOG.md}, and its SHA-256 beside it, in OUT (default dist/). The names are those `cargo binstall`
# (Cargo.toml's [package.metadata.binstall]) and the Action's install step (scripts/action-install.sh) look for.
#
#   scripts/release-archive.sh TARGET [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: release-archive.sh TARGET [OUT]}"
out="${2:-dist}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
name="vramdiff-$version-$target"
cargo build --locked --profile dist --target "$target"
case "$target" in *windows*) exe=.exe ;; *) exe= ;; esac
stage="$(mktemp -d)"
mkdir -p "$stage/$name" "$out"
cp "target/$target/dist/vramdiff$exe" README.md CHANGELOG.md "$stage/$name/"
case "$target" in
  *windows*) archive="$name.zip"; (cd "$stage" && 7z a -tzip -bso0 "$archive" "$name") ;;
  *) archive="$name.tar.gz"; tar -C "$stage" -czf "$stage/$archive" "$name" ;;
esac
mv "$stage/$archive" "$out/"
(cd "$out" && { sha256sum "$archive" 2>/dev/null || shasum -a 256 "$archive"; } > "$archive.sha256")
rm -rf "$stage"
echo "$out/$archive"
