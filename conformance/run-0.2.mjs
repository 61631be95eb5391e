#!/usr/bin/env node
// Runs the official MCP conformance suite 0.2.0-alpha.12 (client mode; the devDependency
// `conformance-next`, on a pinned Node 22 from scripts/runtimes.mjs, installed on first use) against
// conformance/client-0.2.mjs, one scenario at a time (on two cores, timing scenarios such as
// `sse-retry` miss their window when runs overlap), each with a deadline.
//
//   node conformance/run-0.2.mjs [--scenario a,b] [--revision r] [--area core|auth] [--quick]
//                                [--timeout ms] [--client-node path] [--out file] [--verbose] [--list]
//
// Default: every non-extension client scenario at every revision it applies to (the suite's own
// `list --client`). A run passes only when the suite exits 0 (no FAILURE, no WARNING, no client
// timeout, no non-zero client exit unless the scenario allows it) and its checks say the same.
// Prints a table, writes conformance/results-0.2.json, exits 1 if any run failed.
// The module also exports the pieces (listScenarios, planRuns, runScenario, runAll) for tests.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { runtimePath } from '../scripts/runtimes.mjs'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
/** The Node 22 binary the suite needs (the machine's Node 20 is not enough for 0.2). */
export const NODE22 = runtimePath('node-22')
export const SUITE = join(ROOT, 'node_modules', 'conformance-next', 'dist', 'index.js')
export const CLIENT = join(ROOT, 'conformance', 'client-0.2.mjs')
export const RESULTS = join(ROOT, 'conformance', 'results-0.2.json')
/** Every revision a client scenario of this suite can apply to, oldest first. */
export const REVISIONS = ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']
/** `--quick`: one run per area and era, for the test suite. */
export const QUICK = [
  { scenario: 'tools_call', revision: '2025-11-25' },
  { scenario: 'tools_call', revision: '2026-07-28' },
  { scenario: 'auth/metadata-default', revision: '2025-11-25' },
]
/** The suite's client timeout (its `--timeout`, its own default); the client gives up earlier. */
export const CLIENT_TIMEOUT_MS = 30000
/** What the suite may take beyond the client's timeout (mock start and stop) before it is killed. */
const SUITE_GRACE_MS = 30000

/** The Node that runs the client: this one (under Bun, the `node` on PATH), unless told otherwise. */
export function defaultClientNode() {
  return process.env.MCP_CONFORMANCE_CLIENT_NODE || (process.versions.bun ? 'node' : process.execPath)
}

/**
 * The suite's client scenarios: `{ name, revisions, area }`, area `core`, `auth` or `extension`
 * (extensions have no revisions).
 */
export function listScenarios() {
  const text = execFileSync(NODE22, [SUITE, 'list', '--client'], { cwd: ROOT, encoding: 'utf8' })
  const scenarios = []
  for (const line of text.split('\n')) {
    const m = /^\s*- (\S+) \[([^\]]*)\]\s*$/.exec(line)
    if (!m) continue
    const [, name, tag] = m
    if (tag === 'extension') scenarios.push({ name, revisions: [], area: 'extension' })
    else scenarios.push({ name, revisions: tag.split(',').map((r) => r.trim()), area: name.startsWith('auth/') ? 'auth' : 'core' })
  }
  if (scenarios.length === 0) throw new Error(`no scenarios in the suite's list:\n${text}`)
  return scenarios
}

/**
 * The runs `{ scenario, revision, area }` for the options: `scenarios` (names), `revision`, `area`
 * (`core` | `auth`), `quick`. Unknown names, extensions, and a named scenario at a revision where it
 * does not apply are errors.
 */
export function planRuns({ scenarios, revision, area, quick } = {}, catalogue = listScenarios()) {
  const byName = new Map(catalogue.map((s) => [s.name, s]))
  let runs
  if (quick) {
    runs = QUICK.map((r) => ({ ...r, area: byName.get(r.scenario)?.area ?? 'core' }))
  } else {
    const chosen = scenarios?.length ? scenarios : catalogue.filter((s) => s.area !== 'extension').map((s) => s.name)
    runs = []
    for (const name of chosen) {
      const entry = byName.get(name)
      if (!entry) throw new Error(`unknown scenario "${name}" (known: ${catalogue.map((s) => s.name).join(', ')})`)
      if (entry.area === 'extension') throw new Error(`"${name}" is an extension scenario (not run here)`)
      // A named scenario must apply at the named revision; the default set just narrows to it.
      if (revision && scenarios?.length && !entry.revisions.includes(revision)) {
        throw new Error(`"${name}" does not apply at ${revision} (only ${entry.revisions.join(', ')})`)
      }
      for (const rev of entry.revisions) runs.push({ scenario: name, revision: rev, area: entry.area })
    }
  }
  if (area) runs = runs.filter((r) => r.area === area)
  if (revision) runs = runs.filter((r) => r.revision === revision)
  return runs
}

/** The directory under `dir` where the suite put its results (`<scenario>-<time>`; `auth/x` nests one deeper). */
function resultDir(dir) {
  if (!existsSync(dir)) return null
  if (existsSync(join(dir, 'checks.json'))) return dir
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const found = resultDir(join(dir, entry.name))
    if (found) return found
  }
  return null
}

/** `{ checks, client: { stdout, stderr } }` from the suite's `-o` directory; checks null when absent. */
function readResults(dir) {
  const found = resultDir(dir)
  if (!found) return { checks: null, client: {} }
  const client = {}
  for (const name of ['stdout', 'stderr']) {
    const file = join(found, `${name}.txt`)
    if (existsSync(file)) client[name] = readFileSync(file, 'utf8')
  }
  return { checks: JSON.parse(readFileSync(join(found, 'checks.json'), 'utf8')), client }
}

/**
 * Runs one scenario at one revision through the suite. Resolves (never rejects) to
 * `{ scenario, revision, area, status: 'PASS' | 'FAIL', reasons, failing, checks, suiteExitCode,
 * timedOut, durationMs, output, client }`; `failing` lists the non-passing checks
 * `{ id, name, status, message }`; `reasons` says why a run failed (checks, timeout, exit code).
 */
export function runScenario(scenario, revision, { timeoutMs = CLIENT_TIMEOUT_MS, clientNode = defaultClientNode(), area } = {}) {
  const out = mkdtempSync(join(tmpdir(), 'mcp-native-conformance-0.2-'))
  // The suite splits the command on spaces: relative paths from ROOT keep it to two words.
  const clientPath = relative(ROOT, CLIENT)
  if (/\s/.test(clientNode) || /\s/.test(clientPath))
    throw new Error(`paths with spaces cannot go through the suite's --command: ${clientNode}`)
  const args = [
    SUITE,
    'client',
    '--command',
    `${clientNode} ${clientPath}`,
    '--scenario',
    scenario,
    '--timeout',
    String(timeoutMs),
    '-o',
    out,
  ]
  if (revision) args.push('--spec-version', revision)
  const started = Date.now()
  return new Promise((resolve) => {
    // Own process group, so that a hung suite is killed with its mock server and client.
    // The suite hands its environment to the client: the client's own deadline comes before the suite's.
    const env = { ...process.env, MCP_CONFORMANCE_CLIENT_TIMEOUT_MS: String(Math.max(1000, timeoutMs - 5000)) }
    const child = spawn(NODE22, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    let killed = false
    const timer = setTimeout(() => {
      killed = true
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }, timeoutMs + SUITE_GRACE_MS)
    const finish = (code, spawnError) => {
      clearTimeout(timer)
      let results = { checks: null, client: {} }
      try {
        results = readResults(out)
      } catch (err) {
        output += `\nunreadable results: ${err.message}`
      }
      const { checks, client } = results
      rmSync(out, { recursive: true, force: true })
      resolve(judge({ scenario, revision, area, code, killed, spawnError, checks, client, output, durationMs: Date.now() - started }))
    }
    child.on('error', (err) => finish(null, err))
    child.on('close', (code) => finish(code))
  })
}

/** PASS or FAIL for one finished suite run, with the reasons and the non-passing checks. */
function judge({ scenario, revision, area, code, killed, spawnError, checks, client, output, durationMs }) {
  const reasons = []
  const failing = (checks ?? [])
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((c) => ({ id: c.id, name: c.name, status: c.status, message: c.errorMessage ?? c.description }))
  if (spawnError) reasons.push(`suite did not start: ${spawnError.message}`)
  if (killed) reasons.push('suite killed after its deadline')
  if (/SKIPPED: scenario '.*' is not applicable/.test(output)) reasons.push('not applicable at this revision')
  if (checks === null && !killed) reasons.push('no checks.json')
  else if (checks !== null && checks.length === 0) reasons.push('no checks recorded')
  if (failing.length > 0) reasons.push(`${failing.length} check(s) not passing`)
  if (/CLIENT TIMED OUT/.test(output)) reasons.push('client timed out')
  const exited = /CLIENT EXITED WITH ERROR \(code (-?\d+)\)/.exec(output)
  if (exited) reasons.push(`client exit ${exited[1]}`)
  if (code !== 0 && code !== null && reasons.length === 0) reasons.push(`suite exit ${code}`)
  const status = code === 0 && reasons.length === 0 ? 'PASS' : 'FAIL'
  return {
    scenario,
    revision,
    area: area ?? (scenario.startsWith('auth/') ? 'auth' : 'core'),
    status,
    reasons,
    failing,
    checks: checks ?? [],
    suiteExitCode: code,
    timedOut: killed || /CLIENT TIMED OUT/.test(output),
    durationMs,
    output,
    client,
  }
}

/**
 * Runs `runs` (from `planRuns`) one after the other; `onResult(result, index)` after each.
 * Resolves to `{ results, durationMs }`.
 */
export async function runAll(runs, { onResult, ...options } = {}) {
  const started = Date.now()
  const results = []
  for (const [i, run] of runs.entries()) {
    const result = await runScenario(run.scenario, run.revision, { ...options, area: run.area })
    results.push(result)
    onResult?.(result, i)
  }
  return { results, durationMs: Date.now() - started }
}

/** The failing check ids of a result, each once, for the table. */
export function failingIds(result) {
  const ids = [...new Set(result.failing.map((c) => (c.status === 'WARNING' ? `${c.id} (WARNING)` : c.id)))]
  const other = result.reasons.filter((r) => !r.endsWith('not passing'))
  return [...ids, ...other]
}

/** The scenario × revision table and, below it, why each failed run failed. */
export function formatTable(results) {
  const revisions = REVISIONS.filter((r) => results.some((x) => x.revision === r))
  const names = [...new Set(results.map((r) => r.scenario))]
  const width = Math.max(8, ...names.map((n) => n.length))
  const lines = [`${'scenario'.padEnd(width)}  ${revisions.map((r) => r.padEnd(10)).join('  ')}`]
  lines.push(`${'-'.repeat(width)}  ${revisions.map(() => '-'.repeat(10)).join('  ')}`)
  for (const name of names) {
    const cells = revisions.map((rev) => (results.find((r) => r.scenario === name && r.revision === rev)?.status ?? '·').padEnd(10))
    lines.push(`${name.padEnd(width)}  ${cells.join('  ')}`)
  }
  const failed = results.filter((r) => r.status !== 'PASS')
  if (failed.length > 0) {
    lines.push('', 'Failing:')
    for (const r of failed) lines.push(`  ${r.scenario} @ ${r.revision}: ${failingIds(r).join(', ')}`)
  }
  const passed = results.length - failed.length
  lines.push('', `${passed} passed, ${failed.length} failed`)
  return lines.join('\n')
}

function parseArgs(argv) {
  const opts = { scenarios: [], verbose: false, quick: false, list: false, out: RESULTS }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = () => {
      const v = inline ?? argv[++i]
      if (v === undefined) throw new Error(`${flag} needs a value`)
      return v
    }
    if (flag === '--scenario') opts.scenarios.push(...value().split(',').filter(Boolean))
    else if (flag === '--revision' || flag === '--spec-version') opts.revision = value()
    else if (flag === '--area') {
      opts.area = value()
      if (opts.area !== 'core' && opts.area !== 'auth') throw new Error('--area is core or auth')
    } else if (flag === '--quick') opts.quick = true
    else if (flag === '--timeout') opts.timeoutMs = Number(value())
    else if (flag === '--client-node') opts.clientNode = value()
    else if (flag === '--out') opts.out = value()
    else if (flag === '--verbose') opts.verbose = true
    else if (flag === '--list') opts.list = true
    else throw new Error(`unknown option ${arg}`)
  }
  return opts
}

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  for (const [what, path] of [
    ['Node 22 (scripts/runtimes.mjs node-22)', NODE22],
    ['the suite (npm ci installs conformance-next)', SUITE],
  ]) {
    if (!existsSync(path)) throw new Error(`missing ${what}: ${path}`)
  }
  const runs = planRuns(opts)
  if (opts.list) {
    for (const r of runs) console.log(`${r.area}\t${r.scenario}\t${r.revision}`)
    console.log(`${runs.length} runs`)
    return 0
  }
  const clientNode = opts.clientNode ?? defaultClientNode()
  const clientVersion = execFileSync(clientNode, ['--version'], { encoding: 'utf8' }).trim()
  console.log(`conformance 0.2.0-alpha.12: ${runs.length} runs, one at a time (client on ${clientNode} ${clientVersion})`)
  const { results, durationMs } = await runAll(runs, {
    clientNode,
    timeoutMs: opts.timeoutMs,
    onResult: (r, i) => {
      const why = r.status === 'PASS' ? '' : `  ${failingIds(r).join(', ')}`
      console.log(`[${i + 1}/${runs.length}] ${r.status} ${r.scenario} @ ${r.revision} (${(r.durationMs / 1000).toFixed(1)} s)${why}`)
      if (opts.verbose && r.status !== 'PASS') console.log(r.output.replace(/^/gm, '    '))
    },
  })
  console.log(`\n${formatTable(results)}\nin ${(durationMs / 1000).toFixed(1)} s`)
  const report = {
    suite: '@modelcontextprotocol/conformance@0.2.0-alpha.12',
    node: execFileSync(NODE22, ['--version'], { encoding: 'utf8' }).trim(),
    clientNode: clientVersion,
    finishedAt: new Date().toISOString(),
    durationMs,
    passed: results.filter((r) => r.status === 'PASS').length,
    failed: results.filter((r) => r.status !== 'PASS').length,
    runs: results.map((r) => ({
      scenario: r.scenario,
      revision: r.revision,
      area: r.area,
      status: r.status,
      reasons: r.reasons,
      failing: r.failing,
      suiteExitCode: r.suiteExitCode,
      timedOut: r.timedOut,
      durationMs: r.durationMs,
      clientStderr: r.status === 'PASS' ? undefined : (r.client.stderr ?? '').slice(-2000),
    })),
  }
  writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`results: ${relative(process.cwd(), opts.out) || opts.out}`)
  return report.failed > 0 ? 1 : 0
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`run-0.2: ${err.message}`)
      process.exit(2)
    },
  )
}
