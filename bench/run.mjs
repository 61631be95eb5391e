// The benchmark driver (issue 11): `npm run bench` = `node bench/run.mjs [--quick] [--runs=3]
// [--only=stdio,large,...] [--runtimes=node,bun]`.
// For each runtime (Node = the `node` running this script, Bun = `--bun=PATH`, else `bun` on PATH,
// else the newest pinned Bun of scripts/runtimes.mjs) it starts bench/worker.mjs once per
// section, one after the other (Node and Bun alternate), each in a fresh process; within a worker the clients (this package, the
// runtime's floor client, on Node the official SDK) run in alternating rounds and report medians.
// Here the ratios are computed, checked against the issue's targets, printed, and written to
// bench/results.json and bench/results.svg (bench/chart.mjs). With --runs=N the whole bench runs N
// times; each ratio is then the median of the N runs, all N values shown (the issue counts a
// target as met on the median of three full runs).
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

import { runtimePath } from '../scripts/runtimes.mjs'
import { chart } from './chart.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
// --from=FILE: no measuring, the tables, results.json and the chart again from a results.json.
const FROM = opt('from')
const saved = FROM ? JSON.parse(readFileSync(FROM, 'utf8')) : null
const QUICK = saved ? saved.mode === 'quick' : argv.includes('--quick')
const RUNS = saved ? saved.runs : Number(opt('runs') ?? 1)
const ONLY = opt('only')?.split(',')
const NODE = process.execPath
const BUN = findBun()
const RUNTIMES = saved ? Object.keys(saved.measurements[0]) : (opt('runtimes') ?? 'node,bun').split(',').filter((r) => r !== 'bun' || BUN)
const median = (xs) => {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (!s.length) return Number.NaN
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** `--bun=PATH`, else the `bun` on PATH, else the newest pinned Bun (scripts/runtimes.mjs). */
function findBun() {
  const given = opt('bun')
  if (given) return resolve(given)
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'bun'))) return join(dir, 'bun')
  return runtimePath('bun-newest')
}

/** The worker invocations of one run, in order: [section, extra args]. */
function plan() {
  const idleN = 50
  const all = [
    ['stdio', []],
    ['large', []],
    ['http', []],
    ['list', []],
    ['modern', []],
    ['memory', ['--client=package']],
    ['memory', ['--client=floor']],
    ['idle', ['--client=package', '--transport=stdio', `--clients=${idleN}`]],
    ['idle', ['--client=floor', '--transport=stdio', `--clients=${idleN}`]],
    ['idle', ['--client=package', '--transport=http', '--clients=50']],
    ['idle', ['--client=floor', '--transport=http', '--clients=50']],
  ]
  return all.filter(([s]) => !ONLY || ONLY.includes(s))
}

// The workers' environment, which every server they start inherits (but the SDK's, which passes
// only a few variables on). NODE_EXTRA_CA_CERTS makes each Node start ~80 ms slower (it loads the
// bundle): left in, the SDK's servers would start faster than everyone else's.
const WORKER_ENV = { ...process.env }
delete WORKER_ENV.NODE_EXTRA_CA_CERTS

/**
 * The bench's HTTP server (bench/http-server-rs), built here in release (~15 s the first time):
 * its path. `--http-server=fixture` runs the `http` section on the tests' fixture instead.
 */
function httpServer() {
  const given = opt('http-server')
  if (given) return given === 'fixture' ? given : resolve(given)
  const cargo = spawnSync('cargo', ['build', '--release', '-p', 'mcp-native-bench-http', '--message-format=json-render-diagnostics'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
  })
  const built = (cargo.stdout ?? '')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'bench-http-server' && m.executable)
  if (cargo.status !== 0 || !built)
    throw new Error(`building the bench's HTTP server failed (${cargo.error?.message ?? `cargo exit ${cargo.status}`})`)
  return built.executable
}
const HTTP_SERVER = saved || (ONLY && !ONLY.includes('http')) ? null : httpServer()

/** Runs one worker; resolves with its RESULT object. */
function worker(runtime, section, extra) {
  const script = join(ROOT, 'bench', 'worker.mjs')
  const common = [
    `--section=${section}`,
    `--server-node=${NODE}`,
    ...(HTTP_SERVER ? [`--http-server=${HTTP_SERVER}`] : []),
    ...(QUICK ? ['--quick'] : []),
    ...extra,
  ]
  const [cmd, args] = runtime === 'bun' ? [BUN, [script, ...common]] : [NODE, ['--expose-gc', '--no-warnings', script, ...common]]
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: WORKER_ENV, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '))
      if (code !== 0 || !line) return reject(new Error(`${runtime} ${section} ${extra.join(' ')} failed (exit ${code})`))
      resolve(JSON.parse(line.slice(7)))
    })
  })
}

/** One whole bench: { runtime: { workload: { client: { value, … } } } }. */
async function runOnce(run) {
  const res = Object.fromEntries(RUNTIMES.map((r) => [r, {}]))
  for (const [i, [section, extra]] of plan().entries()) {
    const order = (i + run) % 2 ? [...RUNTIMES].reverse() : RUNTIMES
    for (const rt of order) {
      const t0 = performance.now()
      Object.assign(res[rt], await worker(rt, section, extra))
      process.stderr.write(
        `run ${run + 1}/${RUNS}: ${rt} ${section} ${extra.join(' ')} ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
      )
    }
  }
  return res
}

// ---------------------------------------------------------------------------------------------
// Ratios and targets. `speed` is the bar of the chart: how many times the floor's speed the
// package reaches (rate ratio, or inverse time ratio), higher is better.

const get = (r, w, c, k = 'value') => r?.[w]?.[c]?.[k] ?? Number.NaN
function ratios(r, rt) {
  const rows = []
  // `x`: a number, or a comparison of the package with client `c` on workload `w` (see `vs`).
  const add = (group, label, x, cmp, target, speed) =>
    rows.push({ runtime: rt, group, label, value: typeof x === 'number' ? x : x.value, cmp, target, speed, pair: x.pair })
  const node = rt === 'node'
  // Client `who`'s value (the package's unless said) ÷ client c's (a rate ratio, or a time
  // ratio), or its inverse; `pair` lets the same ratio be taken round by round (see `paired`).
  const vs = (w, c, inverse = false, who = 'package') => {
    const v = get(r, w, who) / get(r, w, c)
    return { value: inverse ? 1 / v : v, pair: { workload: w, client: c, inverse, who } }
  }
  add('stdio', 'sequential ÷ floor', vs('sequential', 'floor'), '≥', 1.0, true)
  add('stdio', '64 in flight ÷ floor', vs('inflight64', 'floor'), '≥', node ? 1.3 : 1.0, true)
  if (node) {
    add('stdio', 'sequential ÷ SDK', vs('sequential', 'sdk'), '≥', 1.5)
    add('stdio', '64 in flight ÷ SDK', vs('inflight64', 'sdk'), '≥', 2.0)
  }
  // The ceiling (bench/floor.mjs: no work per call) in the same rounds: the room the machine and
  // the server leave for any client. No target; `reading` uses them (see `beyondCeiling`).
  add('stdio', 'ceiling: sequential ÷ floor', vs('sequential', 'floor', false, 'ceiling'), '', null)
  add('stdio', 'ceiling: 64 in flight ÷ floor', vs('inflight64', 'floor', false, 'ceiling'), '', null)
  if (node) {
    add('stdio', 'ceiling: sequential ÷ SDK', vs('sequential', 'sdk', false, 'ceiling'), '', null)
    add('stdio', 'ceiling: 64 in flight ÷ SDK', vs('inflight64', 'sdk', false, 'ceiling'), '', null)
  }
  for (const mib of [1, 8, 32]) {
    const w = `${mib}MiB`
    add('large', `${mib} MiB time ÷ floor`, vs(w, 'floor'), '≤', 1.0, 'time')
    if (node) add('large', `${mib} MiB SDK time ÷ package time`, vs(w, 'sdk', true), '≥', 2.5)
    add('large', `${mib} MiB block ÷ bare JSON.parse block`, get(r, w, 'package', 'block') / get(r, w, 'bareParse', 'block'), '≤', 1.2)
  }
  add('large', '32 MiB time ÷ 8 MiB time', get(r, '32MiB', 'package') / get(r, '8MiB', 'package'), '≤', 4.5)
  add('http', 'JSON sequential ÷ floor', vs('jsonSequential', 'floor'), '≥', 1.0, true)
  add('http', 'SSE sequential ÷ floor', vs('sseSequential', 'floor'), '≥', 1.0, true)
  add('http', 'JSON 32 in flight ÷ floor', vs('json32', 'floor'), node ? '' : '≥', node ? null : 1.0, true)
  add('http', 'SSE 32 in flight ÷ floor', vs('sse32', 'floor'), node ? '' : '≥', node ? null : 1.0, true)
  if (node) {
    add('http', 'JSON sequential ÷ SDK', vs('jsonSequential', 'sdk'), '', null)
    add('http', 'JSON 32 in flight ÷ SDK', vs('json32', 'sdk'), '≥', 3.0)
    add('http', 'SSE sequential ÷ SDK', vs('sseSequential', 'sdk'), '≥', 2.0)
    add('http', 'SSE 32 in flight ÷ SDK', vs('sse32', 'sdk'), '≥', 2.0)
  }
  add('list', 'connect + 200-tool list time ÷ floor', vs('connectList200', 'floor'), '', null, 'time')
  if (node) add('list', 'connect + 200-tool list: SDK time ÷ package time', vs('connectList200', 'sdk', true), '', null)
  add(
    'memory',
    `RSS growth over ${get(r, 'rss_package', 'package', 'calls').toLocaleString('en').replace('NaN', 'the')} calls, MB`,
    get(r, 'rss_package', 'package'),
    '<',
    10,
  )
  // No floor speaks the 2026-07-28 era: the package there ÷ the package in the 2025 era (same
  // transport, sequential JSON replies, in the same rounds, each against a Node fixture).
  add('modern', '2026-07-28 era ÷ 2025 era, HTTP sequential (package)', vs('modernSequential', 'package2025'), '', null)
  return rows
}

const CHART_LABELS = {
  'sequential ÷ floor': 'stdio sequential',
  '64 in flight ÷ floor': 'stdio 64 in flight',
  '1 MiB time ÷ floor': '1 MiB result (time)',
  '8 MiB time ÷ floor': '8 MiB result (time)',
  '32 MiB time ÷ floor': '32 MiB result (time)',
  'JSON sequential ÷ floor': 'HTTP JSON sequential',
  'JSON 32 in flight ÷ floor': 'HTTP JSON 32 in flight',
  'SSE sequential ÷ floor': 'HTTP SSE sequential',
  'SSE 32 in flight ÷ floor': 'HTTP SSE 32 in flight',
  'connect + 200-tool list time ÷ floor': 'connect + list 200 tools',
}

const met = (row) => {
  if (row.target === null || !Number.isFinite(row.value)) return ''
  if (row.cmp === '≥') return row.value >= row.target ? 'met' : 'MISSED'
  if (row.cmp === '≤') return row.value <= row.target ? 'met' : 'MISSED'
  return row.value < row.target ? 'met' : 'MISSED'
}
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–')

// ---------------------------------------------------------------------------------------------

const runs = saved ? saved.measurements : []
// The 1-minute load average before and after: on two shared cores it says how much to trust a run.
const load = saved ? (saved.loadAverage ?? null) : [loadavg()[0]]
if (!saved) for (let i = 0; i < RUNS; i++) runs.push(await runOnce(i))
if (!saved) load.push(loadavg()[0])
const last = runs[runs.length - 1]
const machine = saved?.machine ?? {
  cpus: `${cpus().length} × ${cpus()[0]?.model?.trim() ?? '?'}`,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  os: osName(),
  node: process.version,
  bun: BUN ? bunVersion() : null,
  // the `http` section's server (null: the section did not run here)
  httpServer:
    HTTP_SERVER === 'fixture'
      ? 'fixture (__test__/fixture/http-server.mjs)'
      : opt('http-server')
        ? HTTP_SERVER
        : HTTP_SERVER && 'bench/http-server-rs',
}

// The measured values (medians of the rounds) of every run, per runtime and workload.
const UNITS = {
  sequential: 'calls/s',
  inflight64: 'calls/s',
  '1MiB': 'ms',
  '8MiB': 'ms',
  '32MiB': 'ms',
  jsonSequential: 'calls/s',
  json32: 'calls/s',
  sseSequential: 'calls/s',
  sse32: 'calls/s',
  modernSequential: 'calls/s',
  connectList200: 'ms',
  serverCapacity: 'calls/s',
}
for (const rt of RUNTIMES) {
  console.log(
    `\n${rt === 'node' ? `Node ${machine.node}` : `Bun ${machine.bun}`}: medians of the rounds${RUNS > 1 ? ` (run ${RUNS} of ${RUNS})` : ''}`,
  )
  const table = []
  for (const [w, byClient] of Object.entries(last[rt])) {
    if (w.startsWith('rss_') || w.startsWith('idle_')) continue
    const row = { workload: `${w} (${UNITS[w] ?? ''})` }
    for (const [c, v] of Object.entries(byClient)) {
      row[c] = fmt(v.value, v.value < 100 ? 1 : 0)
      if (v.block !== undefined) row[`${c} block ms`] = fmt(v.block, 1)
      if (v.serverBusy !== undefined) row[`${c} server %`] = fmt(v.serverBusy, 0)
      if (v.httpServerBusy !== undefined) row[`${c} server %`] = fmt(v.httpServerBusy, 0)
      if (v.httpServerUs !== undefined) row[`${c} server µs`] = fmt(v.httpServerUs, 1)
    }
    table.push(row)
  }
  console.table(table)
  const mem = []
  for (const [w, byClient] of Object.entries(last[rt]))
    for (const [c, v] of Object.entries(byClient)) {
      if (w.startsWith('rss_'))
        mem.push({
          what: `RSS growth after ${v.calls} calls (64 in flight), MB`,
          client: c,
          value: fmt(v.value, 1),
          note: QUICK ? 'quick: fewer calls than 200,000' : '',
        })
      if (w.startsWith('idle_'))
        mem.push({
          what: `idle ${w.split('_')[1]} connection (${v.clients} clients): RSS KiB / fds / handles each`,
          client: c,
          value: `${fmt(v.value, 0)} / ${fmt(v.fds, 1)} / ${fmt(v.handles, 1)}`,
        })
    }
  console.table(mem)
}

// Round by round: in each round the package's value ÷ the other client's in the same round
// (the clients alternate, so the two met much the same machine), every run's rounds pooled; their
// median and a 90% interval for it from the order statistics, which assumes no distribution
// (but rounds that are independent of each other): [x(k), x(n+1-k)], k the largest with
// P(Binomial(n, ½) < k) ≤ 5% (for 15 rounds the 4th and 12th, 96.5%). Where the target lies
// inside the interval, these rounds cannot tell met from missed ("within noise").
function paired(rt, pair) {
  const xs = []
  for (const m of runs) {
    const a = m[rt]?.[pair.workload]?.[pair.who]?.values ?? []
    const b = m[rt]?.[pair.workload]?.[pair.client]?.values ?? []
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      // A client that could not do the workload (the SDK at 32 MiB) has no value to pair.
      if (!(a[i] > 0 && b[i] > 0)) continue
      xs.push(pair.inverse ? b[i] / a[i] : a[i] / b[i])
    }
  }
  const s = xs.sort((p, q) => p - q)
  const n = s.length
  let k = 0
  if (n > 500) {
    k = Math.floor(n / 2 - 0.8224 * Math.sqrt(n)) // the normal approximation (2^-n underflows)
  } else {
    let below = 0
    let term = 1 / 2 ** n // P(B = k)
    while (k < n && below + term <= 0.05) {
      below += term
      term = (term * (n - k)) / (k + 1)
      k++
    }
  }
  return { median: median(s), n, low: k ? s[k - 1] : Number.NaN, high: k ? s[n - k] : Number.NaN }
}
function reading(row, pair) {
  const p = row.paired
  if (!p || row.target === null || !Number.isFinite(p.low)) return ''
  const ok = (x) => (row.cmp === '≥' ? x >= row.target : row.cmp === '≤' ? x <= row.target : x < row.target)
  if (ok(p.low) && ok(p.high)) return 'met'
  if (!ok(p.low) && !ok(p.high)) return beyondCeiling(row, pair) ? 'beyond the ceiling' : 'missed'
  return 'within noise'
}

// A missed rate target ("≥ t × client c") that the ceiling itself, paired with c in the same
// rounds, stays below in the whole 90% interval: no client of the ceiling's kind (an event-loop
// client on the runtime's own process I/O, doing nothing per call) reaches it on this machine
// against this server, so the miss says little about the package. Not a strict bound: the
// ceiling meets the same wake-ups as everyone, and single rounds of other clients can beat it.
function beyondCeiling(row, pair) {
  if (row.cmp !== '≥' || pair.who !== 'package' || pair.inverse) return false
  const c = paired(row.runtime, { ...pair, who: 'ceiling' })
  return c.n > 0 && Number.isFinite(c.high) && c.high < row.target
}

const rowsByRun = runs.map((r) => RUNTIMES.flatMap((rt) => ratios(r[rt], rt)))
const rows = rowsByRun[0].map((row, i) => {
  const values = rowsByRun.map((rs) => rs[i].value)
  const { pair, ...rest } = row
  const out = { ...rest, value: median(values), values }
  out.met = met(out)
  if (pair) {
    out.paired = paired(row.runtime, pair)
    out.reading = reading(out, pair)
  }
  return out
})
console.log(`\nRatios${RUNS > 1 ? `: median of ${RUNS} runs, then every run` : ''} (${QUICK ? 'quick mode' : 'full mode'})`)
console.table(
  rows.map((r) => ({
    runtime: r.runtime,
    ratio: r.label,
    value: fmt(r.value, Math.abs(r.value - (r.target ?? Number.NaN)) < 0.01 ? 3 : 2),
    ...(RUNS > 1 ? { runs: r.values.map((v) => fmt(v)).join(' ') } : {}),
    target: r.target === null ? '' : `${r.cmp} ${r.target}`,
    '': r.met,
    'paired rounds (90%)': r.paired?.n ? `${fmt(r.paired.median)} (${fmt(r.paired.low)}–${fmt(r.paired.high)})` : '',
    reading: r.reading ?? '',
  })),
)
console.log(
  '"paired rounds": each round\'s value of the package (or the ceiling) ÷ the other client\'s in the same round, all runs pooled: their median and a ' +
    '90% interval for it (order statistics). "within noise": the target lies inside that interval. "ceiling": a client ' +
    'that does no work per call (bench/floor.mjs), measured in the same rounds; "beyond the ceiling": missed, and the ' +
    "ceiling's own interval lies below the target too, so no client of its kind reaches that target here.",
)
const stdioCap = last.node?.serverCapacity?.pipe?.value
if (stdioCap)
  console.log(
    `Server check: the stdio fixture answers ${fmt(stdioCap, 0)} calls/s to a client that only counts lines (64-128 in flight); ` +
      `"server %" columns are the server's CPU over the wall time of each measurement (100 = one core busy).`,
  )

const doc = {
  date: saved?.date ?? new Date().toISOString(),
  mode: QUICK ? 'quick' : 'full',
  runs: RUNS,
  machine,
  commit: saved ? (saved.commit ?? null) : gitHead(),
  loadAverage: load,
  ratios: rows,
  measurements: runs,
}
writeFileSync(join(ROOT, 'bench', 'results.json'), `${JSON.stringify(doc, null, 2)}\n`)
const speed = (r, v) => (r.speed === 'time' ? 1 / v : v)
const bars = rows
  .filter((r) => r.speed)
  .map((r) => ({
    runtime: r.runtime,
    label: CHART_LABELS[r.label] ?? r.label,
    speed: speed(r, r.value),
    values: r.values.map((v) => speed(r, v)),
  }))
writeFileSync(join(ROOT, 'bench', 'results.svg'), chart(bars, doc))
console.log('\nwrote bench/results.json and bench/results.svg')

function gitHead() {
  return spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || null
}
function bunVersion() {
  return spawnSync(BUN, ['--version'], { encoding: 'utf8' }).stdout.trim()
}
function osName() {
  try {
    return readFileSync('/etc/os-release', 'utf8').match(/^PRETTY_NAME="?([^"\n]*)/m)?.[1] ?? process.platform
  } catch {
    return process.platform
  }
}
