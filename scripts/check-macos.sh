#!/usr/bin/env bash
# `bash scripts/check-macos.sh [target...]`: builds and links the addon for macOS on this Linux
# machine (default targets aarch64-apple-darwin and x86_64-apple-darwin) and checks that the
# `.dylib` links no Apple framework: only libraries every macOS has (libSystem, libiconv,
# libcharset). It does not run anything (no macOS here). Before issue 29 item 2 the link failed:
# reqwest 0.13's TLS pulled in Security and CoreFoundation, which only a macOS SDK has.
#
# Toolchains, all from the package registries (`rustup target add` cannot download here):
# - Debian's rustc with the standard library's sources (`apt-get install rustc-web cargo-web
#   rust-web-src`): `-Zbuild-std` builds std for the target (RUSTC_BOOTSTRAP=1);
# - zig as C compiler and linker, through cargo-zigbuild (PyPI `ziglang`, `cargo-zigbuild`, in a
#   virtualenv under target/): the C inside aws-lc-sys, libsqlite3-sys and mimalloc, and the link.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then targets=("$@"); else targets=(aarch64-apple-darwin x86_64-apple-darwin); fi

if [ ! -x /usr/bin/rustc ] || [ ! -d /usr/lib/rustlib/src/rust/library ]; then
  echo "check-macos: needs Debian's rustc and std sources: apt-get install rustc-web cargo-web rust-web-src" >&2
  exit 2
fi

venv="target/zig-venv"
if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
  echo "check-macos: installing ziglang and cargo-zigbuild into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 cargo-zigbuild==0.24.1
fi
# cargo-zigbuild runs zig as `python -m ziglang`: the venv's python must come first; Debian's
# cargo and rustc next (rustup's have no macOS std here).
export PATH="$PWD/$venv/bin:/usr/bin:$PATH"
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$PWD/target/macos"

for target in "${targets[@]}"; do
  echo "== build and link mcp-native for $target ($(/usr/bin/rustc --version))" >&2
  /usr/bin/cargo zigbuild --release --locked -p mcp-native --target "$target" -Zbuild-std=std,panic_unwind
  dylib="$CARGO_TARGET_DIR/$target/release/libmcp_native.dylib"
  # The libraries it loads, as named in its load commands (no otool here: the paths are plain text).
  libs="$(grep -aoE '/(System/Library/Frameworks/[A-Za-z]+\.framework/[A-Za-z]+|usr/lib/lib[A-Za-z0-9_.+]+\.dylib)' "$dylib" | sort -u)"
  echo "$dylib ($(stat -c %s "$dylib") bytes) loads:" >&2
  echo "$libs" >&2
  if grep -q '^/System/Library/Frameworks/' <<<"$libs"; then
    echo "check-macos: $target links an Apple framework" >&2
    exit 1
  fi
  grep -q '^/usr/lib/libSystem.B.dylib$' <<<"$libs" || { echo "check-macos: no libSystem in $dylib?" >&2; exit 1; }
done
echo "check-macos: ${targets[*]} link without frameworks" >&2
