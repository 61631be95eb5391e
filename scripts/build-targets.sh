#!/usr/bin/env bash
# `npm run build:targets [-- <platform>…]` (issue 30): builds the addon for every platform the
# agent ships on that this Linux machine can build, each into its npm/<platform>/ folder as
# mcp-native.<platform>.node, and prints a line per target: size, gzipped size, libc floor; then
# tests each one that can run here (the end of this file).
#
# Platforms (npm/ folder names): linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl
# darwin-x64 darwin-arm64 win32-x64-msvc win32-arm64-msvc (default: all of them). win32-x64-msvc is built with the
# GNU toolchain (x86_64-pc-windows-gnu, mingw-w64: MSVC's libraries cannot be fetched here) and
# named as napi-rs's loader looks for it under the official, MSVC-built Node and under Bun; N-API
# is a C interface, and the file imports only system DLLs (checked below). The development build (`npm run build`, what
# `npm ci` runs) stays a plain host build with rustup; only this script needs the toolchains below.
#
# Toolchains, all from the package registries (`rustup target add` cannot download here):
# - zig as C compiler and linker, through cargo-zigbuild (PyPI `ziglang`, `cargo-zigbuild`, in a
#   virtualenv under target/), for every target: the `.2.17` suffix of a gnu target pins the glibc
#   floor (no symbol newer than GLIBC_2.17, checked below with objdump);
# - linux-x64-gnu with rustup's own toolchain and std;
# - every other target with Debian's rustc and the standard library built from its sources
#   (`apt-get install rustc-web cargo-web rust-web-src`; `-Zbuild-std`, RUSTC_BOOTSTRAP=1). Debian
#   moves rustc-web with security updates: the version used is read and printed, never pinned.
# - Windows: mingw-w64 as C compiler and linker (`apt-get install gcc-mingw-w64-x86-64`), and an
#   empty libnode.dll that napi-build insists on linking for windows-gnu (napi-rs finds N-API in
#   the host executable at load time), made here under target/libnode.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64 win32-x64-msvc win32-arm64-msvc)
if [ "$#" -gt 0 ]; then platforms=("$@"); else platforms=("${all[@]}"); fi

venv="target/zig-venv"
zigbin="$PWD/$venv/bin"
# zig and cargo-zigbuild, on first use (every target but Windows).
need_zig() {
  if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
    echo "build-targets: installing ziglang and cargo-zigbuild into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check ziglang==0.17.1 cargo-zigbuild==0.24.1
  fi
}

needs_debian_rust() {
  if [ ! -x /usr/bin/rustc ] || [ ! -d /usr/lib/rustlib/src/rust/library ]; then
    echo "build-targets: $1 needs Debian's rustc and std sources: apt-get install rustc-web cargo-web rust-web-src" >&2
    exit 2
  fi
}

# The Rust target of each platform, and the file cargo writes.
rust_target() {
  case "$1" in
    linux-x64-gnu) echo x86_64-unknown-linux-gnu.2.17 ;;
    linux-arm64-gnu) echo aarch64-unknown-linux-gnu.2.17 ;;
    linux-x64-musl) echo x86_64-unknown-linux-musl ;;
    linux-arm64-musl) echo aarch64-unknown-linux-musl ;;
    darwin-x64) echo x86_64-apple-darwin ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    win32-x64-msvc) echo x86_64-pc-windows-gnu ;;
    win32-arm64-msvc) echo aarch64-pc-windows-gnullvm ;;
    *) echo "build-targets: unknown platform $1 (one of: ${all[*]})" >&2; exit 2 ;;
  esac
}

for platform in "${platforms[@]}"; do
  target="$(rust_target "$platform")"
  triple="${target%.2.17}"
  case "$triple" in
    *apple-darwin) lib=libmcp_native.dylib ;;
    *windows*) lib=mcp_native.dll ;;
    *) lib=libmcp_native.so ;;
  esac
  out="npm/$platform/mcp-native.$platform.node"
  started=$SECONDS
  if [ "$platform" = linux-x64-gnu ]; then
    need_zig
    # rustup's toolchain has this target's std.
    echo "== $platform: $target ($(rustc --version))" >&2
    PATH="$zigbin:$PATH" CARGO_TARGET_DIR="$PWD/target/targets" \
      cargo zigbuild --release --locked -p mcp-native --target "$target"
  elif [ "$platform" = win32-x64-msvc ]; then
    needs_debian_rust "$platform"
    if ! command -v x86_64-w64-mingw32-gcc > /dev/null; then
      echo "build-targets: $platform needs mingw-w64: apt-get install gcc-mingw-w64-x86-64" >&2
      exit 2
    fi
    mkdir -p target/libnode
    if [ ! -f target/libnode/libnode.dll ]; then
      echo 'void mcp_native_no_node_here(void) {}' > target/libnode/empty.c
      x86_64-w64-mingw32-gcc -shared -o target/libnode/libnode.dll target/libnode/empty.c
    fi
    echo "== $platform: $target ($(/usr/bin/rustc --version), std built from source, mingw-w64)" >&2
    PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 LIBNODE_PATH="$PWD/target/libnode" \
      CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc CARGO_TARGET_DIR="$PWD/target/targets" \
      /usr/bin/cargo build --release --locked -p mcp-native --target "$target" -Zbuild-std=std,panic_unwind
  elif [ "$platform" = win32-arm64-msvc ]; then
    # Debian has no mingw-w64 for arm64: zig's (clang and lld, mingw-w64's libraries), for
    # aarch64-pc-windows-gnullvm. Three things differ from the x64 build: zig makes the empty
    # node.dll and its import library; zig does not take the export list rustc hands the linker
    # (`-Wl,<file>.def`), so the one symbol Node needs is exported through a .def of our own; and
    # zig builds C for Windows with -Werror=date-time, which mimalloc's version string trips.
    needs_debian_rust "$platform"
    need_zig
    arm=target/libnode-arm64
    mkdir -p "$arm"
    # napi-build checks that libnode.dll exists before it links `-lnode` (which finds libnode.a).
    if [ ! -f "$arm/libnode.a" ] || [ ! -f "$arm/libnode.dll" ]; then
      echo 'void mcp_native_no_node_here(void) {}' > "$arm/empty.c"
      (cd "$arm" && "$zigbin/python" -m ziglang cc -target aarch64-windows-gnu -shared -o node.dll empty.c -Wl,--out-implib,libnode.a)
      cp "$arm/node.dll" "$arm/libnode.dll"
    fi
    printf 'EXPORTS\n    napi_register_module_v1\n' > "$arm/exports.def"
    echo "== $platform: $target ($(/usr/bin/rustc --version), std built from source, zig)" >&2
    PATH="$zigbin:/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 LIBNODE_PATH="$PWD/$arm" \
      CFLAGS_aarch64_pc_windows_gnullvm="-Wno-error=date-time" CARGO_TARGET_DIR="$PWD/target/targets" \
      "$zigbin/cargo-zigbuild" rustc --release --locked -p mcp-native --lib --target "$target" \
      -Zbuild-std=std,panic_unwind -- -C "link-arg=$PWD/$arm/exports.def"
  else
    needs_debian_rust "$platform"
    need_zig
    echo "== $platform: $target ($(/usr/bin/rustc --version), std built from source)" >&2
    flags=""
    # A musl cdylib must link the C library dynamically (Rust's musl default is static).
    case "$triple" in *musl) flags="-C target-feature=-crt-static" ;; esac
    # The venv's python first (cargo-zigbuild runs zig through it), then Debian's cargo and rustc.
    PATH="$zigbin:/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="$flags" \
      CARGO_TARGET_DIR="$PWD/target/targets" \
      /usr/bin/cargo zigbuild --release --locked -p mcp-native --target "$target" -Zbuild-std=std,panic_unwind
  fi
  cp "target/targets/$triple/release/$lib" "$out"
  size=$(stat -c %s "$out")
  gz=$(gzip -9 -c "$out" | wc -c)
  floor="-"
  case "$triple" in
    *linux-gnu)
      floor="GLIBC_$(objdump -T "$out" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)"
      if [ "$(printf '%s\n2.17\n' "${floor#GLIBC_}" | sort -V | tail -1)" != 2.17 ]; then
        echo "build-targets: $out needs $floor, above the floor of 2.17" >&2
        exit 1
      fi
      ;;
    *linux-musl) floor="musl" ;;
    *apple-darwin)
      if grep -aqE '/System/Library/Frameworks/' "$out"; then
        echo "build-targets: $out links an Apple framework" >&2
        exit 1
      fi
      floor="libSystem"
      ;;
    aarch64-pc-windows-gnullvm)
      # Only the system's DLLs (the UCRT's api sets among them), and Node's entry point exported.
      "$venv/bin/python" -c "import pefile" 2> /dev/null || "$venv/bin/pip" install --quiet --disable-pip-version-check pefile==2024.8.26
      floor="imports: $("$venv/bin/python" scripts/pe-check.py "$out")"
      ;;
    *windows*)
      # Only the system's DLLs: no mingw runtime (libgcc, winpthread) and no libnode.dll.
      dlls=$(x86_64-w64-mingw32-objdump -p "$out" | sed -n 's/^\s*DLL Name: //p' | sort -fu | tr '\n' ' ')
      for dll in $dlls; do
        case "$(echo "$dll" | tr 'A-Z' 'a-z')" in
          kernel32.dll|advapi32.dll|ntdll.dll|msvcrt.dll|ws2_32.dll|bcryptprimitives.dll|userenv.dll|api-ms-win-*) ;;
          *) echo "build-targets: $out imports $dll, which Windows does not have" >&2; exit 1 ;;
        esac
      done
      floor="imports: $dlls"
      ;;
  esac
  echo "built $platform $out $size bytes, gzip -9 $gz bytes, $floor, $((SECONDS - started)) s"
done

# Then each target built is tested by its own runtimes where it can run here (BUILD_TARGETS_TEST=0
# to build only): the Linux ones natively, under qemu-user or as musl (scripts/target-tests.mjs),
# Windows under wine with its clippy and its Rust tests (scripts/wine-tests.mjs). macOS binaries
# cannot run here: what is checked of them is above (the link, no framework).
[ "${BUILD_TARGETS_TEST:-1}" = 1 ] || exit 0
linux=()
windows=0
for platform in "${platforms[@]}"; do
  case "$platform" in
    linux-*) linux+=("$platform") ;;
    win32-x64-msvc) windows=1 ;;
    win32-arm64-msvc) echo "test $platform: not run, wine here runs x64 Windows programs only (README, Platforms)" ;;
    darwin-*) echo "test $platform: not run, a macOS binary cannot run on this machine (README, Platforms)" ;;
  esac
done
node scripts/pack.mjs > /dev/null
if [ "${#linux[@]}" -gt 0 ]; then node scripts/target-tests.mjs "${linux[@]}"; fi
if [ "$windows" = 1 ]; then node scripts/wine-tests.mjs --clippy --rust; fi
