#!/usr/bin/env node
// The wine prefix the Windows builds are tested in (issue 30), outside the repository:
// $MCP_NATIVE_WINE, else $XDG_CACHE_HOME/mcp-native/wine (~/.cache/mcp-native/wine). Made on first use:
//   - `wineboot -i`, then Windows 10 as the version wine reports (Bun for Windows needs it);
//   - bcryptprimitives.dll, which wine 8 lacks and Rust's standard library imports (ProcessPrng):
//     a shim built here from scripts/wine/bcryptprimitives.c with mingw, into the prefix's
//     system32. Test-only; real Windows has the DLL.
// Needs Debian's `wine`, `wine64` and `gcc-mingw-w64-x86-64`.
//
//   node scripts/wine.mjs env     prints the environment (KEY=value lines) wine runs with
//   node scripts/wine.mjs run <exe> [arg…]   runs a Windows program in the prefix
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
export const PREFIX = process.env.MCP_NATIVE_WINE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mcp-native', 'wine')

/** The environment wine runs with: the prefix, its debug output off. */
export function wineEnv() {
  return { ...process.env, WINEPREFIX: PREFIX, WINEDEBUG: process.env.WINEDEBUG ?? '-all' }
}

/** Makes the prefix if it is not there yet; returns wine's environment. */
export function ensureWine() {
  const env = wineEnv()
  const system32 = join(PREFIX, 'drive_c', 'windows', 'system32')
  const shim = join(system32, 'bcryptprimitives.dll')
  if (existsSync(shim)) return env
  for (const tool of ['wine', 'x86_64-w64-mingw32-gcc']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore', env }).error)
      throw new Error(`wine.mjs: ${tool} is missing (apt-get install wine wine64 gcc-mingw-w64-x86-64)`)
  }
  mkdirSync(PREFIX, { recursive: true })
  process.stderr.write(`wine.mjs: making the prefix ${PREFIX}\n`)
  execFileSync('wineboot', ['-i'], { env, stdio: ['ignore', 'ignore', 'ignore'] })
  execFileSync('wine', ['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/d', 'win10', '/f'], {
    env,
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  const built = `${shim}.tmp`
  execFileSync('x86_64-w64-mingw32-gcc', ['-shared', '-O2', '-o', built, join(HERE, 'wine', 'bcryptprimitives.c'), '-ladvapi32'])
  renameSync(built, shim)
  return env
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [cmd, ...rest] = process.argv.slice(2)
  if (cmd === 'env') {
    const env = ensureWine()
    process.stdout.write(`WINEPREFIX=${env.WINEPREFIX}\nWINEDEBUG=${env.WINEDEBUG}\n`)
  } else if (cmd === 'run' && rest.length >= 1) {
    const child = spawnSync('wine', rest, { stdio: 'inherit', env: ensureWine() })
    if (child.error) throw child.error
    process.exit(child.status ?? 1)
  } else {
    process.stderr.write('usage: node scripts/wine.mjs env | run <exe> [arg…]\n')
    process.exit(2)
  }
}
