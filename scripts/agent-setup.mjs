#!/usr/bin/env node
// The agent the package stands in for (SPEC.md 11.1, 11.7), set up in a cache folder outside the
// repository, for the differential type check (scripts/agent-typecheck.mjs) and the parity suite.
//
//   node scripts/agent-setup.mjs [--refresh] [--quiet]
//
// 1. `npm pack @oh-my-pi/pi-coding-agent@18.3.4` into <cache>/agent/ and unpacked with `tar` to
//    <cache>/agent/18.3.4/package (its src/ is the reference).
// 2. The agent's dependencies installed into <cache>/agent/18.3.4/deps (its own package.json and
//    node_modules): every `@oh-my-pi/*` package the agent needs, directly or through another
//    `@oh-my-pi/*` package, at the newest published version not above 18.3.4 (the registry lacks
//    18.3.4 of most of them), pinned with npm `overrides` since they depend on each other at exact
//    versions that do not exist; the other dependencies (and optional ones) at their declared
//    ranges; `@types/bun` at the agent's devDependency range and `typescript` at this repository's
//    devDependency range. Installed with `--ignore-scripts` (install scripts only download
//    binaries from hosts other than the registry, and nothing here needs them).
//
// A stamp file (deps/stamp.json) records the inputs and what was installed: a second run with the
// same inputs does nothing but print the table. `--refresh` resolves and installs again.
// The cache is $MCP_NATIVE_CACHE, else $XDG_CACHE_HOME/mcp-native, else ~/.cache/mcp-native.
import { execFile, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

/** The modules of SPEC 11.2 the package provides (the shims replace them), relative to the agent's src/mcp/. */
export const SHIMMED_MODULES = [
  'client.ts',
  'manager.ts',
  'transports/stdio.ts',
  'transports/http.ts',
  'transports/sse.ts',
  'transports/header-policy.ts',
  'json-rpc.ts',
  'types.ts',
  'errors.ts',
  'timeout.ts',
  'request-id.ts',
  'tool-bridge.ts',
  'oauth-discovery.ts',
  'config-writer.ts',
  'loader.ts',
  'tool-cache.ts',
]

export const AGENT_NAME = '@oh-my-pi/pi-coding-agent'
export const AGENT_VERSION = '18.3.4'
export const CACHE = process.env.MCP_NATIVE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mcp-native')
export const AGENT_DIR = join(CACHE, 'agent', AGENT_VERSION)
export const PACKAGE_DIR = join(AGENT_DIR, 'package')
export const DEPS_DIR = join(AGENT_DIR, 'deps')

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'
/** Bumped when the way the deps folder is built changes, so that old stamps are redone. */
const SCHEMA = 3
const SCOPE = '@oh-my-pi/'
const run = promisify(execFile)

/** An error of the setup itself (missing tarball, registry, install): exit code 2. */
export class SetupError extends Error {}

/** @param {string} v @returns {number[] | null} x.y.z without a pre-release, else null */
function parseVersion(v) {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null
}

/** @param {number[]} a @param {number[]} b */
function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]
}

/** @param {string[]} versions @param {string} ceiling @returns {string | undefined} */
export function newestNotAbove(versions, ceiling) {
  const top = /** @type {number[]} */ (parseVersion(ceiling))
  let best
  let bestParsed
  for (const v of versions) {
    const p = parseVersion(v)
    if (!p || compare(p, top) > 0) continue
    if (!bestParsed || compare(p, bestParsed) > 0) {
      best = v
      bestParsed = p
    }
  }
  return best
}

/** @param {string} file */
function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'))
}

/** @param {(msg: string) => void} log */
function ensureTarball(log) {
  const manifest = join(PACKAGE_DIR, 'package.json')
  if (existsSync(manifest) && existsSync(join(PACKAGE_DIR, 'src', 'mcp', 'manager.ts'))) {
    const { version } = readJson(manifest)
    if (version !== AGENT_VERSION) throw new SetupError(`${PACKAGE_DIR} holds version ${version}, not ${AGENT_VERSION}: remove it`)
    log(`agent: ${PACKAGE_DIR} (already unpacked)`)
    return
  }
  const packDir = join(CACHE, 'agent')
  mkdirSync(packDir, { recursive: true })
  const tgz = join(packDir, `oh-my-pi-pi-coding-agent-${AGENT_VERSION}.tgz`)
  if (!existsSync(tgz)) {
    log(`agent: npm pack ${AGENT_NAME}@${AGENT_VERSION} → ${packDir}`)
    const r = spawnSync(NPM, ['pack', `${AGENT_NAME}@${AGENT_VERSION}`, '--pack-destination', packDir, '--silent'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    })
    if (r.status !== 0 || !existsSync(tgz)) throw new SetupError(`npm pack ${AGENT_NAME}@${AGENT_VERSION} failed (status ${r.status})`)
  }
  const tmp = join(AGENT_DIR, `.unpack-${process.pid}`)
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  const r = spawnSync('tar', ['-xzf', tgz, '-C', tmp], { stdio: 'inherit' })
  if (r.status !== 0 || !existsSync(join(tmp, 'package', 'src', 'mcp', 'manager.ts'))) {
    rmSync(tmp, { recursive: true, force: true })
    throw new SetupError(`could not unpack ${tgz} (tar status ${r.status})`)
  }
  rmSync(PACKAGE_DIR, { recursive: true, force: true })
  renameSync(join(tmp, 'package'), PACKAGE_DIR)
  rmSync(tmp, { recursive: true, force: true })
  log(`agent: unpacked ${tgz} → ${PACKAGE_DIR}`)
}

/** @param {string[]} args @param {{ allow404?: boolean }} [options] */
async function npmJson(args, { allow404 = false } = {}) {
  try {
    const { stdout } = await run(NPM, [...args, '--json'], { maxBuffer: 64 << 20 })
    return stdout.trim() ? JSON.parse(stdout) : undefined
  } catch (e) {
    const err = /** @type {{ stdout?: string, stderr?: string, message: string }} */ (e)
    if (allow404 && /\bE404\b/.test(`${err.stdout}${err.stderr}`)) return undefined
    throw new SetupError(
      `npm ${args.join(' ')} failed: ${(err.stderr || err.stdout || err.message).trim().split('\n').slice(0, 5).join(' / ')}`,
    )
  }
}

/**
 * Every `@oh-my-pi/*` package reachable from `roots` through `@oh-my-pi/*` packages, each at its
 * newest published version not above the agent's.
 * @param {string[]} roots @param {(msg: string) => void} log
 * @returns {Promise<{ chosen: Record<string, string>, missing: string[], newest: Record<string, string>, warnings: string[] }>}
 */
async function resolveScope(roots, log) {
  /** @type {Record<string, string>} */
  const chosen = {}
  /** @type {Record<string, string>} */
  const newest = {}
  /** @type {string[]} */
  const missing = []
  /** @type {Record<string, string>} */
  const companions = {}
  const seen = new Set(roots)
  /** @param {string} name @returns {Promise<string[]>} */
  const versionsOf = async (name) => {
    const versions = await npmJson(['view', name, 'versions'], { allow404: true })
    return Array.isArray(versions) ? versions : versions ? [versions] : []
  }
  /** @param {string} name @param {string} version */
  const manifestOf = async (name, version) => {
    const manifest = await npmJson(['view', `${name}@${version}`])
    return Array.isArray(manifest) ? manifest.at(-1) : manifest
  }
  let level = [...roots]
  while (level.length > 0) {
    /** @type {string[]} */
    const next = []
    await Promise.all(
      level.map(async (name) => {
        const list = await versionsOf(name)
        const pick = newestNotAbove(list, AGENT_VERSION)
        newest[name] = list.filter((v) => parseVersion(v)).at(-1) ?? '-'
        if (!pick) {
          missing.push(name)
          return
        }
        const m = await manifestOf(name, pick)
        const companion = `${name}-${process.platform}-${process.arch}`
        if (m?.optionalDependencies?.[companion]) companions[name] = companion
        chosen[name] = pick
        for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
          for (const dep of Object.keys(m?.[field] ?? {})) {
            if (dep.startsWith(SCOPE) && !seen.has(dep)) {
              seen.add(dep)
              next.push(dep)
            }
          }
        }
      }),
    )
    level = next
  }
  log(`deps: resolved ${Object.keys(chosen).length} ${SCOPE}* packages against the registry`)
  // A package whose native binary comes in a per-platform package (pi-natives) checks that the
  // binary is of its own release: a mismatch does not matter to tsc, but the package will not load.
  /** @type {string[]} */
  const warnings = []
  for (const [name, companion] of Object.entries(companions)) {
    if (chosen[companion] !== chosen[name]) {
      warnings.push(
        `${name} ${chosen[name]} with ${companion} ${chosen[companion] ?? '(none)'}: not one release (the registry lacks the pair): tsc does not mind, but ${name} refuses the binary at run time (its release check)`,
      )
    }
  }
  return { chosen, missing: missing.sort(), newest, warnings }
}

/** @param {Record<string, string>} obj */
function sorted(obj) {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => a.localeCompare(b)))
}

/** The inputs the deps folder is built from; their hash keys the stamp. */
function inputs() {
  const agent = readJson(join(PACKAGE_DIR, 'package.json'))
  const repo = readJson(join(REPO, 'package.json'))
  const typescript = repo.devDependencies?.typescript
  if (!typescript) throw new SetupError(`${join(REPO, 'package.json')} has no typescript devDependency`)
  return {
    schema: SCHEMA,
    agent: `${agent.name}@${agent.version}`,
    dependencies: agent.dependencies ?? {},
    optionalDependencies: agent.optionalDependencies ?? {},
    typesBun: agent.devDependencies?.['@types/bun'] ?? 'latest',
    typescript,
  }
}

/** @param {string} name */
function installedVersion(name) {
  const file = join(DEPS_DIR, 'node_modules', ...name.split('/'), 'package.json')
  return existsSync(file) ? readJson(file).version : undefined
}

/**
 * @typedef {{ key: string, inputs: ReturnType<typeof inputs>, chosen: Record<string, string>,
 *   newest: Record<string, string>, warnings: string[], missing: string[],
 *   installed: Record<string, string | undefined>,
 *   npmFlags: string[], date: string }} Stamp
 */

/** @param {Stamp} stamp @param {(msg: string) => void} log */
function printTable(stamp, log) {
  const rows = [['package', 'declared', 'newest on registry', 'chosen', 'installed']]
  const declared = { ...stamp.inputs.dependencies, ...stamp.inputs.optionalDependencies }
  for (const name of Object.keys(stamp.installed).sort()) {
    const scoped = name.startsWith(SCOPE)
    rows.push([
      name,
      declared[name] ??
        (name === '@types/bun' ? stamp.inputs.typesBun : name === 'typescript' ? stamp.inputs.typescript : '(via @oh-my-pi)'),
      scoped ? (stamp.newest[name] ?? '') : '',
      stamp.chosen[name] ?? (scoped ? 'MISSING' : 'range'),
      stamp.installed[name] ?? 'not installed',
    ])
  }
  for (const name of stamp.missing) {
    const direct = name in declared
    rows.push([
      name,
      declared[name] ?? '(via @oh-my-pi)',
      stamp.newest[name] ?? '-',
      `none ≤ ${AGENT_VERSION}`,
      direct ? 'stubbed' : 'absent',
    ])
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  for (const r of rows) log(`  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd())
  for (const w of stamp.warnings ?? []) log(`  note: ${w}`)
}

/**
 * Ensures the tarball and the deps folder; returns the paths and the stamp.
 * @param {{ refresh?: boolean, quiet?: boolean }} [options]
 */
export async function ensureAgent({ refresh = false, quiet = false } = {}) {
  /** @param {string} msg */
  const log = (msg) => {
    if (!quiet) console.log(msg)
  }
  ensureTarball(log)
  const inp = inputs()
  const key = createHash('sha256').update(JSON.stringify(inp)).digest('hex').slice(0, 16)
  const stampFile = join(DEPS_DIR, 'stamp.json')
  /** @type {Stamp | undefined} */
  let stamp = existsSync(stampFile) ? readJson(stampFile) : undefined
  const intact = stamp && Object.entries(stamp.installed).every(([name, v]) => !v || installedVersion(name) === v)
  if (!refresh && stamp && stamp.key === key && intact) {
    log(`deps: ${DEPS_DIR} (already installed ${stamp.date}, stamp ${key})`)
  } else {
    const started = Date.now()
    const all = { ...inp.dependencies, ...inp.optionalDependencies }
    const roots = Object.keys(all).filter((n) => n.startsWith(SCOPE))
    const { chosen, missing, newest, warnings } = await resolveScope(roots, log)
    /** @param {Record<string, string>} deps */
    const mapDeps = (deps) =>
      sorted(Object.fromEntries(Object.entries(deps).flatMap(([n, r]) => (missing.includes(n) ? [] : [[n, chosen[n] ?? r]]))))
    const manifest = {
      name: 'mcp-native-agent-deps',
      version: '0.0.0',
      private: true,
      description: `Stand-ins for the dependencies of ${inp.agent}, written by mcp-native's scripts/agent-setup.mjs`,
      dependencies: sorted({ ...mapDeps(inp.dependencies), '@types/bun': inp.typesBun, typescript: inp.typescript }),
      optionalDependencies: mapDeps(inp.optionalDependencies),
      overrides: sorted(chosen),
    }
    mkdirSync(DEPS_DIR, { recursive: true })
    rmSync(stampFile, { force: true })
    writeFileSync(join(DEPS_DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    let npmFlags = ['--no-audit', '--no-fund', '--ignore-scripts']
    log(`deps: npm install ${npmFlags.join(' ')} in ${DEPS_DIR}`)
    let r = spawnSync(NPM, ['install', ...npmFlags], { cwd: DEPS_DIR, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
    if (r.status !== 0 && /ERESOLVE/.test(r.stderr)) {
      npmFlags = [...npmFlags, '--legacy-peer-deps']
      log('deps: peer conflict (ERESOLVE), retrying with --legacy-peer-deps')
      r = spawnSync(NPM, ['install', ...npmFlags], { cwd: DEPS_DIR, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
    }
    if (r.status !== 0)
      throw new SetupError(`npm install in ${DEPS_DIR} failed (status ${r.status}):\n${r.stderr.trim().split('\n').slice(-15).join('\n')}`)
    /** @type {Record<string, string | undefined>} */
    const installed = {}
    for (const name of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.optionalDependencies), ...Object.keys(chosen)]) {
      installed[name] = installedVersion(name)
    }
    for (const name of Object.keys(chosen)) {
      // A platform package of another OS or CPU is skipped by npm: that is expected.
      if (!installed[name] && !/-(linux|darwin|win32)-/.test(name)) throw new SetupError(`npm install left out ${name}@${chosen[name]}`)
    }
    stamp = {
      key,
      inputs: inp,
      chosen: sorted(chosen),
      newest: sorted(newest),
      warnings,
      missing,
      installed,
      npmFlags,
      date: new Date().toISOString(),
    }
    writeFileSync(stampFile, `${JSON.stringify(stamp, null, 2)}\n`)
    log(`deps: installed in ${((Date.now() - started) / 1000).toFixed(1)} s (stamp ${key})`)
  }
  if (!stamp) throw new SetupError('no stamp')
  printTable(stamp, log)
  const tsc = join(DEPS_DIR, 'node_modules', 'typescript', 'bin', 'tsc')
  if (!existsSync(tsc)) throw new SetupError(`${tsc} is missing: run node scripts/agent-setup.mjs --refresh`)
  return { cache: CACHE, agentDir: AGENT_DIR, packageDir: PACKAGE_DIR, depsDir: DEPS_DIR, tsc, stamp }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const unknown = args.filter((a) => a !== '--refresh' && a !== '--quiet')
  if (unknown.length > 0) {
    console.error(`agent-setup: unknown argument(s) ${unknown.join(' ')} (use --refresh, --quiet)`)
    process.exit(2)
  }
  try {
    await ensureAgent({ refresh: args.includes('--refresh'), quiet: args.includes('--quiet') })
  } catch (e) {
    console.error(`agent-setup: FAILED: ${e instanceof Error ? e.message : e}`)
    process.exit(2)
  }
}
