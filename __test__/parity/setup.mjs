#!/usr/bin/env node
// Setup of the parity suite (SPEC 11.7), run before the tests (`.ci/run`, or by hand):
//
//   node __test__/parity/setup.mjs [--refresh] [--quiet]
//
// 1. scripts/agent-setup.mjs: the agent's tarball and its dependencies in the cache (npm pack, npm
//    install; --refresh passes on).
// 2. <cache>/agent/18.3.4/parity/node_modules: the same dependencies, as links, except that the
//    `@oh-my-pi/*` packages are hard-linked copies, and `@oh-my-pi/pi-natives` loads: the registry
//    has no release of it whose loader and linux-x64 binary are the same (newest: loader 18.2.10,
//    binary 18.2.11; the newest pair, 18.2.3, lacks exports that pi-utils 18.2.9 imports), so the
//    18.2.10 loader is placed outside any node_modules folder with the 18.2.11 binary beside it: the
//    loader's own "workspace" mode, which loads an addon of another release (README "Versions").
//    The copies are needed because Bun resolves a package from its real path: a link into the deps
//    folder would resolve pi-natives there again.
// 3. A check: in a reference tree (trees.mjs), Bun imports every module of SPEC 11.2 and the
//    agent modules the scenarios use; setup fails (exit 2) if one does not load.
// The stamp (parity/stamp.json) ties the result to the deps stamp; the tests check it.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { DEPS_DIR, ensureAgent, SetupError } from '../../scripts/agent-setup.mjs'
import { buildTree, linkCopy, PARITY_DIR, PARITY_MODULES, PARITY_SCHEMA, PARITY_STAMP, REPO, SHIMMED_MODULES, stubFiles } from './trees.mjs'

const SCOPE = '@oh-my-pi'
const NATIVES = `${SCOPE}/pi-natives`

/** The agent modules the scenarios import, besides those of SPEC 11.2 (relative to src/). */
export const SCENARIO_MODULES = ['mcp/index.ts', 'mcp/startup-events.ts', 'internal-urls/mcp-protocol.ts', 'internal-urls/parse.ts']

/** @param {string} file */
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

/** @param {(msg: string) => void} log */
function prepareModules(log) {
  const deps = join(DEPS_DIR, 'node_modules')
  const companion = `${NATIVES}-${process.platform}-${process.arch}`
  const loaderVersion = existsSync(join(deps, NATIVES, 'package.json')) ? readJson(join(deps, NATIVES, 'package.json')).version : null
  const binaryVersion = existsSync(join(deps, companion, 'package.json')) ? readJson(join(deps, companion, 'package.json')).version : null
  const workspace = loaderVersion && binaryVersion && loaderVersion !== binaryVersion
  rmSync(PARITY_MODULES, { recursive: true, force: true })
  mkdirSync(join(PARITY_MODULES, SCOPE), { recursive: true })
  for (const entry of readdirSync(deps)) {
    if (entry.startsWith('.') || entry === SCOPE) continue
    symlinkSync(join(deps, entry), join(PARITY_MODULES, entry))
  }
  for (const name of readdirSync(join(deps, SCOPE))) {
    const pkg = `${SCOPE}/${name}`
    if (pkg === NATIVES && workspace) continue
    linkCopy(join(deps, pkg), join(PARITY_MODULES, pkg))
  }
  /** @type {Record<string, unknown>} */
  const natives = { loader: loaderVersion, binary: binaryVersion, companion, mode: workspace ? 'workspace' : 'as installed' }
  if (workspace) {
    // Outside any node_modules path: the loader then takes the .node beside it (native/) without
    // its release check (loader-state.js `isWorkspaceLoad`).
    const dir = join(PARITY_DIR, 'natives', 'pi-natives')
    linkCopy(join(deps, NATIVES), dir)
    const binaries = readdirSync(join(deps, companion)).filter((f) => f.endsWith('.node'))
    if (binaries.length === 0) throw new SetupError(`${join(deps, companion)} has no .node file`)
    for (const f of binaries) linkCopy(join(deps, companion, f), join(dir, 'native', f))
    symlinkSync(dir, join(PARITY_MODULES, NATIVES))
    natives.dir = dir
    natives.binaries = binaries
    log(`natives: loader ${NATIVES} ${loaderVersion} with the ${companion} ${binaryVersion} binary, in workspace mode at ${dir}`)
  } else log(`natives: ${NATIVES} ${loaderVersion} with ${companion} ${binaryVersion ?? '(none)'}, as installed`)
  return natives
}

/** The Bun the suite runs on (scripts/runtimes.mjs, installed from npm when missing). */
export function bunPath(runtime = process.env.PARITY_BUN || 'bun-oldest') {
  return execFileSync(process.execPath, [join(REPO, 'scripts', 'runtimes.mjs'), 'path', runtime], { encoding: 'utf8' }).trim()
}

/** @param {(msg: string) => void} log */
function check(log) {
  const root = mkdtempSync(join(tmpdir(), 'mcp-native-parity-setup-'))
  try {
    const { dir } = buildTree(join(root, 'reference'), 'reference')
    const modules = [...SHIMMED_MODULES.map((m) => `mcp/${m}`), ...SCENARIO_MODULES]
    const script = `const failed = []
for (const m of ${JSON.stringify(modules)}) {
  try { await import('./src/' + m) } catch (e) { failed.push(m + ': ' + String(e?.message ?? e).split('\\n')[0]) }
}
console.log(JSON.stringify(failed))
process.exit(0)`
    const bun = bunPath()
    const r = spawnSync(bun, ['-e', script], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, HOME: root } })
    const line = (r.stdout ?? '').trim().split('\n').at(-1) ?? ''
    let failed
    try {
      failed = JSON.parse(line)
    } catch {
      throw new SetupError(`the load check did not finish (status ${r.status}): ${(r.stderr || r.stdout || '').trim().slice(-1500)}`)
    }
    if (failed.length > 0) throw new SetupError(`agent modules that do not load in the reference tree:\n  ${failed.join('\n  ')}`)
    log(`check: ${modules.length} agent modules load under ${bun} (stubs: ${stubFiles().join(', ') || 'none'})`)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

export async function setup({ refresh = false, quiet = false } = {}) {
  /** @param {string} msg */
  const log = (msg) => {
    if (!quiet) console.log(msg)
  }
  const agent = await ensureAgent({ refresh, quiet })
  mkdirSync(PARITY_DIR, { recursive: true })
  rmSync(PARITY_STAMP, { force: true })
  const natives = prepareModules(log)
  check(log)
  const stamp = { schema: PARITY_SCHEMA, deps: agent.stamp.key, natives, date: new Date().toISOString() }
  writeFileSync(PARITY_STAMP, `${JSON.stringify(stamp, null, 2)}\n`)
  log(`parity: ${PARITY_DIR} ready (stamp ${PARITY_STAMP})`)
  return stamp
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const unknown = args.filter((a) => a !== '--refresh' && a !== '--quiet')
  if (unknown.length > 0) {
    console.error(`parity setup: unknown argument(s) ${unknown.join(' ')} (use --refresh, --quiet)`)
    process.exit(2)
  }
  try {
    await setup({ refresh: args.includes('--refresh'), quiet: args.includes('--quiet') })
  } catch (e) {
    console.error(`parity setup: FAILED: ${e instanceof Error ? e.message : e}`)
    process.exit(2)
  }
}
