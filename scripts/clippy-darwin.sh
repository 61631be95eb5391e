#!/usr/bin/env bash
# `cargo clippy -D warnings` of both crates for the two macOS targets (issue 30: what can be
# checked of a build that cannot run here), with Debian's rustc and clippy (`apt-get install
# rustc-web cargo-web rust-web-src rust-web-clippy`), the standard library built from source, and
# zig as C compiler for the dependencies' C code (the venv of scripts/build-targets.sh).
#
# missing_const_for_thread_local is allowed: Debian's clippy 1.96 flags thread-locals that are
# already `const { … }` when std is built from source (rustup's clippy does not).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="target/zig-venv"
if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 cargo-zigbuild==0.24.1
fi
for target in aarch64-apple-darwin x86_64-apple-darwin; do
  echo "== clippy $target ($(/usr/bin/rustc --version))" >&2
  PATH="$PWD/$venv/bin:/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
    CARGO_TARGET_DIR="$PWD/target/targets" \
    "$PWD/$venv/bin/cargo-zigbuild" clippy --locked -p mcp-native-core -p mcp-native --all-targets \
    --target "$target" -Zbuild-std=std,panic_unwind -- -D warnings -A clippy::missing_const_for_thread_local
done
echo "clippy-darwin: ok"
