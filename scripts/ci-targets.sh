#!/usr/bin/env bash
# `npm run test:targets` (in `npm run test:ci`; issue 30): the cross-target part of CI, kept to
# about 20 minutes on two cores. Each run
#
# 1. builds the shipping linux-x64-gnu package (glibc floor 2.17) and smoke-tests it on this
#    machine's Node and on Bun;
# 2. builds and tests ONE other target, in rotation by the number of commits on the branch (a day
#    of the year on a shallow clone), and says which: arm64 under qemu-user, musl through
#    scripts/musl.mjs, Windows x64 under wine (with its clippy and Rust tests), Windows arm64 and
#    macOS built and linked;
# 3. when that target is not Windows, checks the Windows code with clippy (-D warnings).
#
# `npm run build:targets` builds and tests every target (before a release, or to see them all).
set -euo pipefail
cd "$(dirname "$0")/.."

rotation=(linux-arm64-gnu linux-x64-musl win32-x64-msvc linux-arm64-musl darwin-arm64 win32-arm64-msvc darwin-x64)
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null || echo true)" = false ]; then
  n=$(git rev-list --count HEAD)
  why="commit $n on this branch"
else
  n=$((10#$(date +%j)))
  why="day $n of the year (a shallow clone has no commit count)"
fi
pick=${rotation[$((n % ${#rotation[@]}))]}
echo "ci-targets: linux-x64-gnu and, by $why, $pick (rotation: ${rotation[*]})"

case "$pick" in
  linux-arm64-*)
    # qemu-user runs arm64 programs through binfmt_misc; without it nothing arm64 can run here.
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
      echo "ci-targets: no binfmt_misc entry for qemu-aarch64 on this machine: $pick is built, NOT run" >&2
      BUILD_TARGETS_TEST=0 bash scripts/build-targets.sh "$pick"
      pick=""
    fi
    ;;
esac
bash scripts/build-targets.sh linux-x64-gnu ${pick:+"$pick"}
if [ "$pick" != win32-x64-msvc ]; then node scripts/wine-tests.mjs --only=clippy; fi
echo "ci-targets: ok"
