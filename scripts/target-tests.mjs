#!/usr/bin/env node
// The Linux builds of other platforms tested here (issue 30), each by its own runtimes: arm64
// under qemu-user (binfmt), musl through scripts/musl.mjs. The Windows build has its own script
// (scripts/wine-tests.mjs); macOS builds cannot run here.
//
//   node scripts/target-tests.mjs <platform…>     (after `npm run build:targets -- <platform>`)
//
// For each platform (an npm/ folder name):
// 1. smoke: the packed root and the platform package installed by npm into an empty folder, then
//    a stdio call, an HTTPS call and the SQLite cache (scripts/smoke/run.mjs), on the platform's
//    Node and Bun;
// 2. files: the stdio and client test files from the repository, the platform's build beside the
//    host's in native/ (the loader picks by platform), under the platform's Bun (`bun test`) and
//    its Node (vitest, its bundler's native binding for that platform fetched from npm into a
//    cache folder: `npm ci` installs only this machine's), with the platform's Node first on PATH.
//    The fixture servers run on this machine's Node (MCP_NATIVE_FIXTURE_NODE): an emulated server
//    is many times slower, and the client under test is the emulated one.
//
// linux-x64-gnu is this machine's: its shipped build (glibc 2.17) gets the smoke test on the
// machine's Node and on Bun, and the compiled single-file binary check (scripts/smoke/compiled.mjs);
// the whole suite runs on the host build in `npm test`.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { MUSL_NODE } from './musl.mjs'
import { CACHE, emulated, launcher, npmUnpack, runtimePath } from './runtimes.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BUN = 'bun@1.3.14' // the agent's oldest supported Bun (18.3.4)
const NODE_GNU = 'node@22.23.5'
const FILES = ['__test__/stdio.test.mjs', '__test__/client.test.mjs']

/** @param {string} platform */
function machineOf(platform) {
  const [os, arch, libc] = platform.split('-')
  if (os !== 'linux' || !['x64', 'arm64'].includes(arch) || !['gnu', 'musl'].includes(libc))
    throw new Error(`target-tests: ${platform} is not a Linux platform this script tests`)
  return { platform: 'linux', arch, musl: libc === 'musl' }
}

/**
 * Runs a command, its output shown; returns 1 if it failed (or ran over `minutes`), else 0.
 * @param {string[]} cmd @param {NodeJS.ProcessEnv} env @param {number} minutes
 */
function run(cmd, env, minutes = 20) {
  process.stdout.write(`target-tests: ${cmd.join(' ')}\n`)
  const r = spawnSync(cmd[0], cmd.slice(1), { cwd: ROOT, env, stdio: 'inherit', timeout: minutes * 60_000, killSignal: 'SIGKILL' })
  if (r.error) process.stdout.write(`target-tests: ${r.error}\n`)
  return r.status === 0 ? 0 : 1
}

/**
 * Vitest's bundler (rolldown) binding for `platform`, from npm into the cache: the NODE_PATH
 * folder that holds it.
 * @param {string} platform
 */
function rolldownBinding(platform) {
  const require = createRequire(join(ROOT, 'package.json'))
  const version = JSON.parse(readFileSync(require.resolve('rolldown/package.json'), 'utf8')).version
  const modules = join(CACHE, `rolldown-${version}-${platform}`, 'node_modules')
  const dir = join(modules, '@rolldown', `binding-${platform}`)
  if (existsSync(join(dir, 'package.json'))) return modules
  const tmp = join(CACHE, `.tmp-rolldown-${process.pid}`)
  mkdirSync(tmp, { recursive: true })
  try {
    npmUnpack(`@rolldown/binding-${platform}@${version}`, tmp)
    mkdirSync(dirname(dir), { recursive: true })
    renameSync(join(tmp, 'package'), dir)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return modules
}

const platforms = process.argv.slice(2)
if (platforms.length === 0) {
  process.stderr.write('usage: node scripts/target-tests.mjs <platform…> (linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl)\n')
  process.exit(2)
}
let failed = 0
const results = []
for (const platform of platforms) {
  const machine = machineOf(platform)
  const built = join(ROOT, 'npm', platform, `mcp-native.${platform}.node`)
  if (!existsSync(built)) throw new Error(`target-tests: ${built} is missing: npm run build:targets -- ${platform}`)
  const env = emulated(machine)
  const home = platform === 'linux-x64-gnu'
  const node = home ? process.execPath : runtimePath(machine.musl ? `node@${MUSL_NODE}` : NODE_GNU, machine)
  const bun = runtimePath(BUN, machine)
  const note = (/** @type {string} */ what, /** @type {number} */ f) => {
    failed += f
    results.push(`${platform} ${what}: ${f ? 'FAILED' : 'ok'}`)
  }
  for (const [name, bin] of [
    ['node', node],
    ['bun', bun],
  ]) {
    const smoke = [process.execPath, join(ROOT, 'scripts', 'smoke', 'run.mjs'), `--platform=${platform}`, '--', ...launcher(machine, bin)]
    note(`smoke on ${name}`, run(smoke, env))
  }
  if (home) {
    // The agent's single-file binaries: `bun build --compile` of a script importing the package,
    // run from an empty folder with the installation gone (issue 30 item 5).
    note('bun build --compile, run from an empty folder', run([process.execPath, join(ROOT, 'scripts', 'smoke', 'compiled.mjs')], env))
    continue
  }
  // The repository's loader (native/index.js) finds this build beside the host's.
  copyFileSync(built, join(ROOT, 'native', `mcp-native.${platform}.node`))
  // `node` on PATH is the platform's, as on such a machine (a test under Bun runs a script that
  // imports the package with it); the fixture servers run on this machine's Node.
  const filesEnv = { ...env, PATH: `${dirname(node)}:${env.PATH}`, MCP_NATIVE_FIXTURE_NODE: process.execPath }
  note(`bun test ${FILES.join(' ')}`, run([...launcher(machine, bun), 'test', '--timeout', '60000', ...FILES], filesEnv))
  const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
  note(
    `vitest ${FILES.join(' ')}`,
    run([...launcher(machine, node), vitest, 'run', ...FILES], { ...filesEnv, NODE_PATH: rolldownBinding(platform) }),
  )
}
process.stdout.write(`${results.join('\n')}\ntarget-tests: ${failed ? 'FAILED' : 'ok'}\n`)
process.exit(failed ? 1 : 0)
