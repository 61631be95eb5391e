#!/usr/bin/env bash
# `bash scripts/check-macos.sh [target...]`: proves the crate still compiles for macOS (default
# target aarch64-apple-darwin; name others, such as x86_64-apple-darwin or x86_64-unknown-freebsd,
# to check those instead) by running clippy with -D warnings on all targets, with and without the
# `node` feature. It compiles and lints, it does not link or run anything: there is no macOS SDK
# here (linking needs its Security and CoreFoundation frameworks) and no macOS to run tests on.
#
# The C inside aws-lc-sys and libsqlite3-sys needs a C compiler for the target, and gcc only
# builds for Linux: zig (PyPI package ziglang, which ships macOS's libc headers) is that
# compiler, driven by cargo-zigbuild (also from PyPI). Both go into a virtualenv under target/,
# the Rust standard library for each target comes from rustup.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then targets=("$@"); else targets=(aarch64-apple-darwin); fi

venv="target/zig-venv"
if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
  echo "check-macos: installing ziglang and cargo-zigbuild into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 cargo-zigbuild==0.24.1
fi
# cargo-zigbuild runs zig as `python -m ziglang`: the venv's python must come first.
export PATH="$PWD/$venv/bin:$PATH"

installed="$(rustup target list --installed)"
for target in "${targets[@]}"; do
  if ! grep -qx "$target" <<<"$installed"; then
    echo "check-macos: rustup target add $target" >&2
    rustup target add "$target"
  fi
done

for target in "${targets[@]}"; do
  for features in "" "--no-default-features"; do
    echo "== clippy --target $target --all-targets $features" >&2
    # shellcheck disable=SC2086 # $features is one flag or none
    cargo-zigbuild clippy --target "$target" --all-targets $features -- -D warnings
  done
done
echo "check-macos: ${targets[*]} compile and pass clippy" >&2
