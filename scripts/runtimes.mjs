#!/usr/bin/env node
// The runtimes the tests run on (DESIGN.md principle 12), pinned, installed from the npm registry
// at test time into a cache folder outside the repository — never as devDependencies, whose
// `os`/`cpu` restrictions would break `npm ci` on other platforms.
//
//   node scripts/runtimes.mjs path <name> [--arch=arm64] [--libc=musl] [--platform=win32]
//                                             prints the binary's path, installing it if missing
//                                             (another arch or libc than this machine's: for the
//                                             builds of other platforms, run under qemu-user;
//                                             Windows builds run under wine, scripts/wine.mjs;
//                                             musl builds in a namespace, scripts/musl.mjs)
//   node scripts/runtimes.mjs install [name…] installs (default: every pinned runtime)
//   node scripts/runtimes.mjs list            the pinned runtimes, one a line
//   node scripts/runtimes.mjs run <name> [arg…]
//                                             runs the runtime with the arguments (its exit code)
//
// <name> is a key of RUNTIMES (e.g. `bun-oldest`) or `bun@1.3.14` / `node@26.12.1`.
// The cache is $MCP_NATIVE_RUNTIMES, else $XDG_CACHE_HOME/mcp-native/runtimes, else
// ~/.cache/mcp-native/runtimes. Each runtime is checked by running `<binary> --version` once
// after it is unpacked: a binary that does not answer with its pinned version is an error.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { installMusl, muslLauncher } from './musl.mjs'
import { ensureWine } from './wine.mjs'

/**
 * The pinned runtimes. The agent requires Bun >=1.3.7 (12.7.6) and >=1.3.14 (18.3.4); jest and
 * vitest users run Node 20 (the machine's own) and later. `npm test` runs `bun-oldest`;
 * `npm run test:ci` adds the rest. Node 22 is what the conformance suite 0.2 needs.
 */
export const RUNTIMES = {
  'bun-oldest': 'bun@1.3.14',
  'bun-floor-12.7': 'bun@1.3.7',
  'bun-newest': 'bun@1.4.5',
  'node-lts': 'node@26.12.1',
  'node-22': 'node@22.23.5',
}

export const CACHE =
  process.env.MCP_NATIVE_RUNTIMES || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mcp-native', 'runtimes')

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** @param {string} spec a key of RUNTIMES or name@version */
function parse(spec) {
  const full = RUNTIMES[/** @type {keyof typeof RUNTIMES} */ (spec)] ?? spec
  const at = full.lastIndexOf('@')
  const name = full.slice(0, at)
  const version = full.slice(at + 1)
  if (at <= 0 || !version || (name !== 'bun' && name !== 'node'))
    throw new Error(`unknown runtime "${spec}" (use bun@x.y.z, node@x.y.z or one of ${Object.keys(RUNTIMES).join(', ')})`)
  return { name, version }
}

/**
 * @typedef {{ platform: string, arch: string, musl: boolean }} Machine the machine a runtime is
 * for: this one by default
 */

/** @returns {Machine} */
function host() {
  return { platform: process.platform, arch: process.arch, musl: process.platform === 'linux' && isMusl() }
}

/**
 * The npm package that carries the runtime for `machine`, and the binary's path in it.
 * @param {string} name @param {string} version @param {Machine} machine
 */
function packageOf(name, version, { platform, arch: nodeArch, musl }) {
  const arch = nodeArch === 'arm64' ? (name === 'bun' ? 'aarch64' : 'arm64') : nodeArch
  const exe = platform === 'win32' ? `${name}.exe` : name
  if (name === 'bun') {
    const os = platform === 'win32' ? 'windows' : platform
    return { pkg: `@oven/bun-${os}-${arch}${musl ? '-musl' : ''}@${version}`, bin: join('bin', exe) }
  }
  if (musl) throw new Error('runtimes: npm has no musl build of Node')
  const os = platform === 'win32' ? 'win' : platform
  return { pkg: `node-${os}-${arch}@${version}`, bin: join('bin', exe) }
}

/**
 * The environment a runtime of `machine` runs in here: for an arm64 glibc binary on x64,
 * qemu-user (through binfmt_misc) loads its libraries from Debian's cross sysroot
 * (`apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross`).
 * @param {Machine} machine
 */
export function emulated(machine) {
  if (machine.platform === 'win32' && process.platform !== 'win32') return ensureWine()
  if (machine.arch === process.arch || machine.platform !== 'linux' || machine.musl) return process.env
  return { QEMU_LD_PREFIX: '/usr/aarch64-linux-gnu', ...process.env }
}

export function isMusl() {
  // @ts-expect-error glibcVersionRuntime is in the report's header on glibc systems only
  return !process.report?.getReport()?.header?.glibcVersionRuntime
}

/**
 * How to run a binary of `machine` here: `[command, ...leading args]` (wine for a Windows build).
 * @param {Partial<Machine>} machine @param {string} bin
 * @returns {[string, ...string[]]}
 */
export function launcher(machine, bin) {
  if (machine.platform === 'win32' && process.platform !== 'win32') return ['wine', bin]
  if (muslHere(machine)) return muslLauncher(CACHE, machine.arch ?? process.arch, bin)
  return [bin]
}

/** A musl runtime on this glibc machine (scripts/musl.mjs). @param {Partial<Machine>} machine */
function muslHere(machine) {
  return (machine.platform ?? process.platform) === 'linux' && machine.musl === true && !host().musl
}

/**
 * `npm pack` of `spec` into `dir`, unpacked there: its files end up in `dir`/package.
 * @param {string} spec @param {string} dir
 */
export function npmUnpack(spec, dir) {
  const out = execFileSync(NPM, ['pack', spec, '--silent', '--pack-destination', dir], {
    encoding: 'utf8',
    shell: process.platform === 'win32',
  })
  const tgz = out.trim().split('\n').pop()
  if (!tgz) throw new Error(`npm pack ${spec} printed no file name`)
  execFileSync('tar', ['-xzf', join(dir, tgz), '-C', dir])
}

/**
 * The binary of a runtime, installed into the cache if it is not there yet.
 * @param {string} spec
 * @param {Partial<Machine>} [machine] another machine's build (default: this machine's)
 * @returns {string}
 */
export function runtimePath(spec, machine = {}) {
  const { name, version } = parse(spec)
  const target = { ...host(), ...machine }
  // Node's musl build comes from PyPI, not npm (scripts/musl.mjs).
  const musl = muslHere(target)
  const { pkg, bin } = musl && name === 'node' ? { pkg: null, bin: join('bin', 'node') } : packageOf(name, version, target)
  const dir = join(CACHE, `${name}-${version}-${target.platform}-${target.arch}${target.musl ? '-musl' : ''}`)
  const path = join(dir, bin)
  if (existsSync(path)) return path
  mkdirSync(CACHE, { recursive: true })
  const tmp = mkdtempSync(join(CACHE, '.tmp-'))
  try {
    let unpacked = join(tmp, 'package')
    if (pkg) {
      process.stderr.write(`runtimes: installing ${pkg} into ${dir}\n`)
      npmUnpack(pkg, tmp)
      chmodSync(join(unpacked, bin), 0o755)
    }
    if (musl) {
      const patched = join(tmp, 'musl')
      installMusl(CACHE, name, version, target.arch, patched, pkg ? join(unpacked, bin) : undefined)
      unpacked = patched
    }
    const [exe, ...lead] = launcher(target, join(unpacked, bin))
    const said = execFileSync(exe, [...lead, '--version'], { encoding: 'utf8', env: emulated(target) })
      .trim()
      .replace(/^v/, '')
    if (said !== version) throw new Error(`${pkg}: the binary says it is ${said}, not ${version}`)
    rmSync(dir, { recursive: true, force: true })
    try {
      renameSync(unpacked, dir)
    } catch (err) {
      // Another process installed the same runtime meanwhile: theirs is as good.
      if (!existsSync(path)) throw err
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return path
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [cmd, ...rest] = process.argv.slice(2)
  const flag = (/** @type {string} */ f) => rest.find((a) => a.startsWith(`--${f}=`))?.slice(f.length + 3)
  const machine = {
    ...(flag('arch') ? { arch: flag('arch') } : {}),
    ...(flag('libc') ? { musl: flag('libc') === 'musl' } : {}),
    ...(flag('platform') ? { platform: flag('platform') } : {}),
  }
  const plain = rest.filter((a) => !a.startsWith('--'))
  if (cmd === 'path' && plain.length === 1) {
    process.stdout.write(`${runtimePath(plain[0], machine)}\n`)
  } else if (cmd === 'run' && rest.length >= 1) {
    const bin = runtimePath(rest[0])
    process.stderr.write(`runtimes: ${rest[0]} = ${bin}\n`)
    const child = spawnSync(bin, rest.slice(1), { stdio: 'inherit' })
    if (child.error) throw child.error
    process.exit(child.status ?? 1)
  } else if (cmd === 'install') {
    for (const spec of rest.length ? rest : Object.keys(RUNTIMES)) process.stdout.write(`${spec}: ${runtimePath(spec)}\n`)
  } else if (cmd === 'list') {
    for (const [key, spec] of Object.entries(RUNTIMES)) process.stdout.write(`${key} ${spec}\n`)
    for (const entry of existsSync(CACHE) ? readdirSync(CACHE) : []) if (!entry.startsWith('.')) process.stdout.write(`cached: ${entry}\n`)
  } else {
    process.stderr.write('usage: node scripts/runtimes.mjs path <runtime> | install [runtime…] | list\n')
    process.exit(2)
  }
}
