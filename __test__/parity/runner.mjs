// The parity runner (SPEC 11.7): builds the two trees, runs each scenario once in each (a Bun
// process per run, one after the other, each bounded and its process tree ended), compares the two
// records and labels the result: identical, [fix] (only where scenarios.mjs declares the
// difference with its reason under SPEC 11.7's rule), or differs. Used by run.mjs (a table) and
// parity.suite.ts (bun test).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { SCENARIOS } from './scenarios.mjs'
import { bunPath } from './setup.mjs'
import { buildTrees } from './trees.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
export const HOST = join(HERE, 'host.ts')
const RECORD_PREFIX = '\u0001PARITY-RECORD '
/** Time a run may take beyond its scenario's budget (start-up, clean-up) before it is killed. */
const GRACE_MS = 15_000
/** Variables of the agent and the package that would change what a scenario sees. */
const SCRUBBED_ENV = /^(OMP_|PI_|MCP_NATIVE_|XDG_)/

/**
 * @typedef {import('./scenarios.mjs').ScenarioSpec} ScenarioSpec
 * @typedef {{ record?: unknown, events?: unknown[], error?: unknown, crash?: string, stderr?: string, ms: number }} SideResult
 * @typedef {{ path: string, reference: unknown, package: unknown }} Difference
 * @typedef {{ name: string, status: 'identical' | 'fix' | 'differs', reason?: string, differences: Difference[],
 *   reference: SideResult, package: SideResult }} Outcome
 */

/** @param {{ bun?: string, keep?: boolean }} [options] */
export function prepare({ bun, keep = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'mcp-native-parity-'))
  let trees
  try {
    trees = buildTrees(join(root, 'trees'))
  } catch (e) {
    rmSync(root, { recursive: true, force: true })
    throw e
  }
  return {
    root,
    trees,
    bun: bun ?? (process.versions.bun ? process.execPath : bunPath()),
    dispose() {
      if (!keep) rmSync(root, { recursive: true, force: true })
    },
  }
}

/** Process ids whose command line contains `text` (Linux's /proc; elsewhere none are found). */
function processesWith(text) {
  /** @type {number[]} */
  const found = []
  let entries = []
  try {
    entries = readdirSync('/proc')
  } catch {
    return found
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/**
 * Runs one scenario in one tree.
 * @param {ReturnType<typeof prepare>} env @param {ScenarioSpec} spec @param {'reference' | 'package'} side
 * @returns {Promise<SideResult>}
 */
export function runSide(env, spec, side) {
  const tmp = join(env.root, 'runs', spec.name, side)
  const project = join(tmp, 'project')
  const home = join(tmp, 'home')
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(project, { recursive: true })
  mkdirSync(home, { recursive: true })
  const marker = `mcp-native-parity-${process.pid}-${spec.name}-${side}`
  const budget = spec.budgetMs ?? 20_000
  /** @type {Record<string, string>} */
  const childEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED_ENV.test(k)) childEnv[k] = v
  Object.assign(childEnv, {
    HOME: home,
    PARITY_TREE: env.trees[side].dir,
    PARITY_SIDE: side,
    PARITY_TMP: tmp,
    PARITY_MARKER: marker,
    PARITY_BUDGET_MS: String(budget),
    ...(process.env.PARITY_DEBUG ? { PARITY_DEBUG: '1' } : {}),
    ...spec.env,
  })
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn(env.bun, [HOST, join(HERE, 'scenarios', `${spec.name}.ts`)], {
      cwd: project,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d))
    let killed = false
    const killTree = () => {
      try {
        if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL')
        else child.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
    const timer = setTimeout(() => {
      killed = true
      killTree()
    }, budget + GRACE_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      killTree()
      for (const pid of processesWith(marker)) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone meanwhile
        }
      }
      const ms = Date.now() - started
      const line = out.split('\n').find((l) => l.startsWith(RECORD_PREFIX))
      const stderr = err.trim().split('\n').slice(-12).join('\n')
      if (!line) {
        resolve({ crash: killed ? `killed after ${budget + GRACE_MS} ms` : `exited (${code ?? signal}) without a record`, stderr, ms })
        return
      }
      const parsed = JSON.parse(line.slice(RECORD_PREFIX.length))
      resolve({ ...parsed, ...(process.env.PARITY_DEBUG ? { stderr } : {}), ms })
    })
  })
}

/**
 * The JSON paths where `a` and `b` differ (at most `limit`).
 * @param {unknown} a @param {unknown} b @returns {Difference[]}
 */
export function differences(a, b, path = '', limit = 50) {
  /** @type {Difference[]} */
  const out = []
  const visit = (/** @type {unknown} */ x, /** @type {unknown} */ y, /** @type {string} */ p) => {
    if (out.length >= limit) return
    if (Object.is(x, y)) return
    const bothObjects = x && y && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)
    if (!bothObjects) {
      out.push({ path: p || '(root)', reference: x, package: y })
      return
    }
    if (Array.isArray(x) && Array.isArray(y)) {
      const n = Math.max(x.length, y.length)
      for (let i = 0; i < n; i++) {
        if (i >= x.length || i >= y.length) {
          out.push({ path: `${p}[${i}]`, reference: i < x.length ? x[i] : '(absent)', package: i < y.length ? y[i] : '(absent)' })
          if (out.length >= limit) return
          continue
        }
        visit(x[i], y[i], `${p}[${i}]`)
      }
      return
    }
    const ox = /** @type {Record<string, unknown>} */ (x)
    const oy = /** @type {Record<string, unknown>} */ (y)
    for (const k of new Set([...Object.keys(ox), ...Object.keys(oy)])) {
      const q = p ? `${p}.${k}` : k
      if (!(k in ox)) out.push({ path: q, reference: '(absent)', package: oy[k] })
      else if (!(k in oy)) out.push({ path: q, reference: ox[k], package: '(absent)' })
      else visit(ox[k], oy[k], q)
      if (out.length >= limit) return
    }
  }
  visit(a, b, path)
  return out
}

/**
 * A fix's path as a pattern: `[*]` stands for any index; the path covers what is under it.
 * @param {string} path
 */
export function fixPattern(path) {
  const body = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('\\[\\*\\]', '\\[\\d+\\]')
  return new RegExp(`^${body}(?:$|[.[])`)
}

/**
 * The outcome of a scenario from its two runs: identical; [fix] when every difference is under a
 * path the scenario declares in `fixes` (SPEC 11.7: it follows a [fix]/[beyond] of sections 3–10,
 * or a scenario shows the reference's behaviour is a defect); else differs.
 * @param {ScenarioSpec} spec @param {SideResult} reference @param {SideResult} pkg @returns {Outcome}
 */
export function compare(spec, reference, pkg) {
  const strip = (/** @type {SideResult} */ r) => ({ record: r.record, events: r.events, error: r.error, crash: r.crash })
  const diffs = differences(strip(reference), strip(pkg))
  if (diffs.length === 0) return { name: spec.name, status: 'identical', differences: [], reference, package: pkg }
  const fixes = (spec.fixes ?? []).map((f) => ({ ...f, re: fixPattern(f.path) }))
  const covered = (/** @type {Difference} */ d) => fixes.find((f) => f.re.test(d.path))
  if (!reference.crash && !pkg.crash && diffs.every(covered)) {
    const reasons = [...new Set(diffs.map((d) => covered(d)?.reason))]
    return { name: spec.name, status: 'fix', reason: reasons.join('; '), differences: diffs, reference, package: pkg }
  }
  return { name: spec.name, status: 'differs', differences: diffs.filter((d) => !covered(d)), reference, package: pkg }
}

/** @param {ReturnType<typeof prepare>} env @param {ScenarioSpec} spec @returns {Promise<Outcome>} */
export async function runScenario(env, spec) {
  const reference = await runSide(env, spec, 'reference')
  const pkg = await runSide(env, spec, 'package')
  return compare(spec, reference, pkg)
}

/** @param {unknown} v */
function brief(v, max = 90) {
  const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? 'undefined')
  return s.length > max ? `${s.slice(0, max - 1)}…` : s
}

/** One line per difference, for the table and the test's message. @param {Outcome} o */
export function describeOutcome(o, max = 3) {
  if (o.status === 'identical') return 'identical'
  if (o.status === 'fix') return `[fix]: ${o.reason}`
  const crash = o.reference.crash || o.package.crash
  if (crash)
    return `differs: ${o.reference.crash ? `reference ${o.reference.crash}` : ''}${o.package.crash ? ` package ${o.package.crash}` : ''}`.trim()
  const parts = o.differences.slice(0, max).map((d) => `${d.path}: ${brief(d.reference)} → ${brief(d.package)}`)
  const more = o.differences.length > max ? ` (+${o.differences.length - max} more)` : ''
  return `differs: ${parts.join('; ')}${more}`
}

/** @param {{ fast?: boolean, names?: string[] }} [filter] @returns {ScenarioSpec[]} */
export function selectScenarios({ fast = false, names = [] } = {}) {
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n))
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`)
  return SCENARIOS.filter((s) => (names.length > 0 ? names.includes(s.name) : !fast || s.fast))
}
