// The two trees of the parity suite (SPEC 11.7), built from the cache that setup.mjs fills:
//   reference: the agent's src/ (@oh-my-pi/pi-coding-agent 18.3.4) as shipped, plus the stubs of
//              stubs/src (relative agent modules that do not load here; README "Stubs");
//   package:   the same, with the modules of SPEC 11.2 replaced by examples/agent-shims and
//              node_modules/mcp-native → this repository.
// Both trees share one node_modules (<cache>/agent/18.3.4/parity/node_modules): the agent's
// dependencies as scripts/agent-setup.mjs installs them, with `@oh-my-pi/pi-natives` loadable
// (README "Versions"). Building a tree copies files and makes links: it never fetches, so the tests
// may build their trees; setup.mjs (npm, the registry) must have run first.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { AGENT_DIR, AGENT_VERSION, DEPS_DIR, PACKAGE_DIR, SHIMMED_MODULES } from '../../scripts/agent-setup.mjs'

export { SHIMMED_MODULES }

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const PARITY_DIR = join(AGENT_DIR, 'parity')
export const PARITY_MODULES = join(PARITY_DIR, 'node_modules')
export const PARITY_STAMP = join(PARITY_DIR, 'stamp.json')
export const STUBS_DIR = join(REPO, '__test__', 'parity', 'stubs', 'src')
export const SHIMS_DIR = join(REPO, 'examples', 'agent-shims')
/** What to run when the cache is missing or stale. */
export const SETUP_COMMAND = 'node __test__/parity/setup.mjs'
/** Bumped when the way setup.mjs builds PARITY_DIR changes: older stamps are redone. */
export const PARITY_SCHEMA = 1

/** The cache is missing or stale: the message names the command that fixes it. */
export class ParityCacheError extends Error {
  constructor(/** @type {string} */ what) {
    super(`parity cache not ready: ${what}. Run \`${SETUP_COMMAND}\` first (it fetches with npm; the tests never do).`)
  }
}

/** @param {string} dir @param {string} [prefix] @returns {string[]} files under dir, relative, with '/' */
export function walk(dir, prefix = '') {
  /** @type {string[]} */
  const out = []
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) out.push(...walk(dir, rel))
    else out.push(rel)
  }
  return out
}

/** The stubs, relative to src/ (e.g. `internal-urls/router.ts`). */
export function stubFiles() {
  return existsSync(STUBS_DIR) ? walk(STUBS_DIR).filter((f) => f.endsWith('.ts')) : []
}

/**
 * Throws a ParityCacheError unless setup.mjs has prepared the cache for the deps installed now.
 * @returns {{ key: string, deps: string, natives: Record<string, unknown>, date: string }}
 */
export function readParityStamp() {
  if (!existsSync(join(PACKAGE_DIR, 'src', 'mcp', 'manager.ts')))
    throw new ParityCacheError(`${PACKAGE_DIR} (the agent's tarball) is missing`)
  const depsStamp = join(DEPS_DIR, 'stamp.json')
  if (!existsSync(depsStamp)) throw new ParityCacheError(`${depsStamp} (the agent's dependencies) is missing`)
  if (!existsSync(PARITY_STAMP)) throw new ParityCacheError(`${PARITY_STAMP} is missing`)
  const stamp = JSON.parse(readFileSync(PARITY_STAMP, 'utf8'))
  const deps = JSON.parse(readFileSync(depsStamp, 'utf8'))
  if (stamp.schema !== PARITY_SCHEMA || stamp.deps !== deps.key)
    throw new ParityCacheError(`${PARITY_STAMP} was made for other dependencies (stamp ${stamp.deps}, installed ${deps.key})`)
  return stamp
}

/**
 * Copies `from` to `to` as hard links where the platform can (`cp -al`), else as a plain copy.
 * @param {string} from @param {string} to
 */
export function linkCopy(from, to) {
  rmSync(to, { recursive: true, force: true })
  mkdirSync(dirname(to), { recursive: true })
  if (process.platform !== 'win32') {
    const r = spawnSync('cp', ['-al', from, to], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
    if (r.status === 0) return
    rmSync(to, { recursive: true, force: true })
  }
  cpSync(from, to, { recursive: true, verbatimSymlinks: true })
}

/**
 * One tree: src/ and package.json of the tarball, the stubs over src/, node_modules linking each
 * entry of the parity node_modules; the package tree adds the shims and `mcp-native` → REPO.
 * @param {string} dir @param {'reference' | 'package'} side
 * @returns {{ dir: string, replaced: string[], kept: string[] }}
 */
export function buildTree(dir, side) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  cpSync(join(PACKAGE_DIR, 'src'), join(dir, 'src'), { recursive: true })
  cpSync(join(PACKAGE_DIR, 'package.json'), join(dir, 'package.json'))
  for (const stub of stubFiles()) cpSync(join(STUBS_DIR, stub), join(dir, 'src', stub))
  const nm = join(dir, 'node_modules')
  mkdirSync(nm)
  for (const entry of readdirSync(PARITY_MODULES)) {
    if (entry.startsWith('.') || entry === 'mcp-native') continue
    symlinkSync(join(PARITY_MODULES, entry), join(nm, entry))
  }
  /** @type {string[]} */
  const replaced = []
  /** @type {string[]} */
  const kept = []
  if (side === 'package') {
    symlinkSync(REPO, join(nm, 'mcp-native'))
    for (const mod of SHIMMED_MODULES) {
      if (existsSync(join(SHIMS_DIR, mod))) {
        cpSync(join(SHIMS_DIR, mod), join(dir, 'src', 'mcp', mod))
        replaced.push(mod)
      } else kept.push(mod)
    }
  }
  return { dir, replaced, kept }
}

/**
 * Both trees under `root` (made fresh), after checking the cache.
 * @param {string} root
 */
export function buildTrees(root) {
  const stamp = readParityStamp()
  if (!existsSync(PARITY_MODULES)) throw new ParityCacheError(`${PARITY_MODULES} is missing`)
  const reference = buildTree(join(root, 'reference'), 'reference')
  const pkg = buildTree(join(root, 'package'), 'package')
  return { stamp, agent: AGENT_VERSION, reference, package: pkg }
}
