#!/usr/bin/env node
// The win32-x64 build tested under wine (issue 30), with the official Node and Bun for Windows:
//
//   node scripts/wine-tests.mjs [--rust] [--clippy] [--only=clippy,smoke,bun,rust]
//
// 0. clippy (with --clippy): `cargo clippy -D warnings` of both crates for Windows, with Debian's
//    rustc and clippy (`apt-get install rust-web-clippy`);
// 1. smoke: on Node 22 and on Bun 1.3.14 and 1.4.5 for Windows, the packed root and win32-x64-msvc package (`npm run pack:all -- --local` after
//    `npm run build:targets win32-x64-msvc`) installed by npm into an empty folder, then a stdio
//    call, an HTTPS call and the SQLite cache from Node for Windows and from Bun for Windows
//    (scripts/smoke/run.mjs);
// 2. bun: the stdio, client and Windows test files under Bun for Windows (`bun test`, the newest
//    Bun: see WINDOWS_RUNTIMES), the fixture servers run by Node for Windows (found on the wine
//    PATH: `node`, through PATHEXT);
// 3. rust (with --rust, or --only=rust): the core crate's Windows tests (its Job Object and ACL
//    calls, the BatBadBut command lines), cross-compiled and run as Windows programs.
//
// Vitest cannot run under Node for Windows here (its bundler's native binding for Windows is not
// installed by `npm ci` on Linux), hence Node for Windows runs the smoke test only.
//
// Wine's gaps, worked around for testing only: bcryptprimitives.dll (scripts/wine.mjs), and
// DiscardVirtualMemory, which Bun 1.3's allocator calls and wine 8 aborts on: Bun 1.3 runs from a copy
// whose import of it names VirtualUnlock instead (same arguments; on memory that is not locked it
// does nothing and returns 0, which DiscardVirtualMemory's callers read as success; discarding is
// only a hint).
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { runtimePath } from './runtimes.mjs'
import { ensureWine } from './wine.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const PLATFORM = 'win32-x64-msvc'
const WIN = { platform: 'win32', arch: 'x64' }
/**
 * The Windows runtimes: the newest Node 22 npm has for Windows, the agent's oldest Bun (1.3.14)
 * and the newest. The test files run under the newest Bun: Bun 1.3.14 needs the import patch
 * below under wine, and so patched it now and then spins at 100% CPU inside its own code while
 * loading a test file (seen twice in about ten runs, never on Linux), which 1.4.5 never did.
 */
export const WINDOWS_RUNTIMES = { node: 'node@22.23.3', bunOldest: 'bun@1.3.14', bun: 'bun@1.4.5' }

const args = process.argv.slice(2)
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',') ?? [...(args.includes('--clippy') ? ['clippy'] : []), 'smoke', 'bun', ...(args.includes('--rust') ? ['rust'] : [])]

/** Cargo with Debian's rustc and a standard library built for Windows from source. */
const cargoEnv = {
  ...process.env,
  PATH: `/usr/bin:${process.env.PATH}`,
  RUSTC: '/usr/bin/rustc',
  RUSTC_BOOTSTRAP: '1',
  CARGO_TARGET_DIR: join(ROOT, 'target', 'targets'),
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER: 'x86_64-w64-mingw32-gcc',
  LIBNODE_PATH: join(ROOT, 'target', 'libnode'),
}
const WINDOWS_TARGET = ['--target', 'x86_64-pc-windows-gnu', '-Zbuild-std=std,panic_unwind']

/** A wine path for a Unix path (wine maps / to Z:). */
const winPath = (p) => `Z:${p.replaceAll('/', '\\')}`

/** Bun for Windows with its DiscardVirtualMemory import renamed (see above), made once. */
export function wineBun(bun) {
  const patched = join(dirname(bun), 'bun-wine.exe')
  if (existsSync(patched)) return patched
  const bytes = readFileSync(bun)
  const from = Buffer.from('DiscardVirtualMemory\0', 'latin1')
  const to = Buffer.alloc(from.length)
  to.write('VirtualUnlock', 'latin1')
  const at = bytes.indexOf(from)
  if (at < 0 || bytes.indexOf(from, at + 1) >= 0) throw new Error(`wine-tests: ${bun} does not import DiscardVirtualMemory exactly once`)
  to.copy(bytes, at)
  writeFileSync(`${patched}.tmp`, bytes, { mode: 0o755 })
  copyFileSync(`${patched}.tmp`, patched)
  return patched
}

function run(cmd, argv, env) {
  process.stderr.write(`wine-tests: ${[cmd, ...argv].join(' ')}\n`)
  const r = spawnSync(cmd, argv, { cwd: ROOT, stdio: 'inherit', env, timeout: 30 * 60_000 })
  if (r.error) throw r.error
  return r.status ?? 1
}

const built = join(ROOT, 'npm', PLATFORM, `mcp-native.${PLATFORM}.node`)
// Clippy alone needs neither the build nor wine (CI checks the Windows code that way when its
// rotation tests another target: scripts/ci-targets.sh).
const underWine = only.some((o) => o !== 'clippy')
if (underWine && !existsSync(built)) {
  process.stderr.write(`wine-tests: ${built} is missing: npm run build:targets -- ${PLATFORM}\n`)
  process.exit(2)
}
const env = underWine ? ensureWine() : process.env
const node = underWine ? runtimePath(WINDOWS_RUNTIMES.node, WIN) : ''
const bunOldest = underWine ? wineBun(runtimePath(WINDOWS_RUNTIMES.bunOldest, WIN)) : ''
const bun = underWine ? runtimePath(WINDOWS_RUNTIMES.bun, WIN) : ''
// `node` on the wine PATH: the tests under Bun start fixture servers as `node`.
const winEnv = { ...env, WINEPATH: winPath(dirname(node)) }
let failed = 0

if (only.includes('clippy')) {
  // napi-build links an empty libnode.dll for windows-gnu (made by build-targets.sh, or here).
  const libnode = join(cargoEnv.LIBNODE_PATH, 'libnode.dll')
  if (!existsSync(libnode)) {
    mkdirSync(cargoEnv.LIBNODE_PATH, { recursive: true })
    writeFileSync(join(cargoEnv.LIBNODE_PATH, 'empty.c'), 'void mcp_native_no_node_here(void) {}\n')
    execFileSync('x86_64-w64-mingw32-gcc', ['-shared', '-o', libnode, join(cargoEnv.LIBNODE_PATH, 'empty.c')])
  }
  failed += run(
    '/usr/bin/cargo',
    // missing_const_for_thread_local: Debian's clippy 1.96 flags thread-locals that are already
    // `const { … }` when std is built from source for this target (rustup's clippy does not).
    [
      'clippy',
      '--locked',
      '-p',
      'mcp-native-core',
      '-p',
      'mcp-native',
      '--all-targets',
      ...WINDOWS_TARGET,
      '--',
      '-D',
      'warnings',
      '-A',
      'clippy::missing_const_for_thread_local',
    ],
    cargoEnv,
  )
}

if (only.includes('smoke')) {
  for (const runtime of [node, bunOldest, bun]) {
    failed += run(process.execPath, [join(ROOT, 'scripts', 'smoke', 'run.mjs'), `--platform=${PLATFORM}`, '--', 'wine', runtime], winEnv)
  }
}

if (only.includes('bun')) {
  // The repository's loader (native/index.js) finds the Windows build beside the host's.
  copyFileSync(built, join(ROOT, 'native', `mcp-native.${PLATFORM}.node`))
  const files = ['__test__/windows.test.mjs', '__test__/stdio.test.mjs', '__test__/client.test.mjs']
  failed += run('wine', [bun, 'test', '--timeout', '60000', ...files], winEnv)
}

if (only.includes('rust')) {
  const out = execFileSync(
    '/usr/bin/cargo',
    ['test', '--locked', '-p', 'mcp-native-core', ...WINDOWS_TARGET, '--no-run', '--message-format=json'],
    { cwd: ROOT, env: cargoEnv, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exes = out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((m) => m.reason === 'compiler-artifact' && m.profile?.test && m.executable)
    .map((m) => m.executable)
  // The crate's own tests (unit tests of windows.rs, error.rs, the spawn plan) and the
  // Windows-only test files; the others start Unix programs.
  const wanted = exes.filter((e) => /[\\/](mcp_native_core|windows_batch)-[0-9a-f]+\.exe$/.test(e))
  if (wanted.length !== 2) throw new Error(`wine-tests: expected the lib and windows_batch tests, got ${exes.join(', ')}`)
  for (const exe of wanted) {
    const filter = exe.includes('windows_batch') ? [] : ['windows', 'win_command', 'errors_get_libuv']
    failed += run('wine', [exe, '--test-threads=1', ...filter], winEnv)
  }
}

process.stdout.write(`wine-tests: ${failed ? 'FAILED' : 'ok'} (${only.join(', ')})\n`)
process.exit(failed ? 1 : 0)
