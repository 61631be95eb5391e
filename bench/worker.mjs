// One section of the benchmark in one runtime: `node bench/worker.mjs --section=S [--quick]` or
// `bun bench/worker.mjs …`. bench/run.mjs starts it, once per section and runtime, and reads the
// last stdout line (`RESULT {json}`); progress goes to stderr. Within a section the clients are
// measured in alternating rounds (the order rotates every round, so that the machine's noise hits
// all alike) and each value is the median of the rounds.
// Clients: `package` (this package as the agent calls it: connectToServer + callTool / listTools,
// from the package root), `floor` (bench/floor.mjs, this runtime's plain client) and, on Node,
// `sdk` (the official TypeScript SDK's Client). Servers are the project's own, the same whatever
// the runtime measured: the fixtures run by one Node (--server-node, default `node`), and for the
// `http` section the bench's HTTP server (--http-server, see HTTP_SERVER).
import { readFileSync, readdirSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

import { callTool, connectToServer, disconnectServer, listTools } from 'mcp-native'
import { startHttpFloor, startStdioCeiling, startStdioFloor } from './floor.mjs'
import { blockDuring, inFlightRate, median, sequentialRate } from './rates.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

const IS_BUN = !!process.versions.bun
const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, ...v] = a.replace(/^--/, '').split('=')
    return [k, v.length ? v.join('=') : 'true']
  }),
)
const QUICK = args.has('quick')
const SECTION = args.get('section')
const SERVER_NODE = args.get('server-node') ?? 'node'
const FIXTURE = join(ROOT, '__test__', 'fixture', 'server.mjs')
const HTTP_FIXTURE = join(ROOT, '__test__', 'fixture', 'http-server.mjs')
const MODERN_FIXTURE = join(ROOT, '__test__', 'fixture', 'modern-server.mjs')
// The `http` section's server: the bench's own (bench/http-server-rs, built by bench/run.mjs,
// which passes its path), or `fixture` for the tests' fixture on Node (the HTTP rows' server up to
// 2c33760; ~4x the CPU a request, see "The bench's HTTP server" in bench/NOTES.md).
const HTTP_SERVER = args.get('http-server')
const ROUNDS = Number(args.get('rounds') ?? (QUICK ? 3 : 5))

const log = (...a) => process.stderr.write(`  [${IS_BUN ? 'bun' : 'node'} ${SECTION}] ${a.join(' ')}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const gc = () => {
  if (IS_BUN) globalThis.Bun.gc(true)
  else globalThis.gc?.()
}

// ---------------------------------------------------------------------------------------------
// The clients, all with one face: callTool(name, args) → result, listTools(), close().

// --batch-writes: the fixture's fast mode (one write per chunk of requests read), see server.mjs.
const SERVER_ARGS = [FIXTURE, '--batch-writes']
const stdioConfig = (extra = []) => ({ command: SERVER_NODE, args: [...SERVER_ARGS, ...extra] })

async function packageClient(config, options) {
  const connection = await connectToServer('bench', config, options)
  return {
    callTool: (name, a) => callTool(connection, name, a),
    listTools: () => listTools(connection),
    close: () => disconnectServer(connection),
  }
}

async function sdkClient(transport) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const client = new Client({ name: 'sdk', version: '1' })
  await client.connect(transport)
  return {
    callTool: (name, a) => client.callTool({ name, arguments: a }),
    listTools: async () => (await client.listTools()).tools,
    close: () => client.close(),
  }
}

async function sdkStdio(extra = []) {
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const { command, args: a } = stdioConfig(extra)
  return sdkClient(new StdioClientTransport({ command, args: a, stderr: 'inherit' }))
}

async function sdkHttp(url) {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
  return sdkClient(new StreamableHTTPClientTransport(new URL(url)))
}

const stdioClients = (extra = []) => ({
  package: () => packageClient(stdioConfig(extra)),
  floor: () => startStdioFloor(SERVER_NODE, [...SERVER_ARGS, ...extra]),
  ...(IS_BUN ? {} : { sdk: () => sdkStdio(extra) }),
})

const httpClients = (url) => ({
  package: () => packageClient({ type: 'http', url }),
  floor: () => startHttpFloor(url),
  ...(IS_BUN ? {} : { sdk: () => sdkHttp(url) }),
})

// ---------------------------------------------------------------------------------------------
// Measuring tools.

/**
 * The echo texts, made once: call i sends TEXTS[i % 4096], so calls in flight together send
 * different texts. Not `m${i}` made in the call: V8 makes a number's text in its old generation
 * (its number-to-string cache), and one such string a call made every client's young
 * collections keep ~10x more, 1.3-1.7 µs a call at 64 in flight on Node (bench/NOTES.md, "Young
 * collections"): the bench measured V8's cache, not the clients.
 */
const TEXTS = Array.from({ length: 4096 }, (_, k) => `m${k}`)

/** An echo call that checks its answer (every client pays the same check). */
const echo = (c, tool, i) => {
  const text = TEXTS[i & 4095]
  return c.callTool(tool, { message: text }).then((r) => {
    if (r.content[0].text !== text) throw new Error(`wrong echo: ${JSON.stringify(r).slice(0, 200)}`)
  })
}

/** CPU milliseconds `pid` has used (utime + stime from /proc, 100 Hz ticks). */
function cpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) * 10
  } catch {
    return Number.NaN
  }
}

/** The pids of this process's children (servers spawned by whichever client). */
function children() {
  const found = []
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(f[1]) === process.pid && f[0] !== 'Z') found.push(Number(e))
    } catch {}
  }
  return found
}

/**
 * Runs `fn()` and also reports how busy `pids` (the servers) were meanwhile: their CPU time over
 * the wall time, in % of one core. A server below ~100% is not what limits the measured rate.
 */
async function withServerLoad(pids, fn) {
  if (!pids.length) return { value: await fn(), busy: Number.NaN }
  const c0 = pids.reduce((s, p) => s + cpuMs(p), 0)
  const t0 = performance.now()
  const value = await fn()
  const wall = performance.now() - t0
  const busy = ((pids.reduce((s, p) => s + cpuMs(p), 0) - c0) / wall) * 100
  return { value, busy }
}

/**
 * Alternating rounds: in every round each client is started, runs every case (in the first round
 * a warm-up pass first) and is closed; the clients' order rotates from round to round.
 * `cases[name](client, clientName)` returns a number, or { value, …more medians }. Returns { case: { client: { value,
 * values, busy } } } with the medians.
 */
async function rounds(clients, cases, { warm = true, n = ROUNDS, prepare } = {}) {
  const names = Object.keys(clients)
  const out = {}
  for (const k of Object.keys(cases)) out[k] = {}
  for (let r = 0; r < n; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length])
    for (const cname of order) {
      const before = new Set(children())
      const c = await clients[cname]()
      const pids = children().filter((p) => !before.has(p))
      if (prepare) await prepare(c, cname)
      for (const [k, fn] of Object.entries(cases)) {
        // warm-up pass (compiling the code paths) in the first round only: later rounds reuse it
        if (warm && r === 0) await fn(c, cname)
        const m = await withServerLoad(pids, () => fn(c, cname))
        const v = typeof m.value === 'object' ? m.value : { value: m.value }
        const slot = (out[k][cname] ??= { values: [], busy: [], extra: {} })
        slot.values.push(v.value)
        slot.busy.push(m.busy)
        for (const [ek, ev] of Object.entries(v)) if (ek !== 'value') (slot.extra[ek] ??= []).push(ev)
      }
      await c.close()
    }
    log(`round ${r + 1}/${n} done`)
  }
  for (const k of Object.keys(out))
    for (const cname of Object.keys(out[k])) {
      const s = out[k][cname]
      const res = { value: median(s.values), values: s.values }
      if (s.busy.some((b) => !Number.isNaN(b))) res.serverBusy = median(s.busy.filter((b) => !Number.isNaN(b)))
      for (const [ek, ev] of Object.entries(s.extra)) res[ek] = median(ev)
      out[k][cname] = res
    }
  return out
}

// ---------------------------------------------------------------------------------------------
// Sections.

const sections = {}

/** Small tools/call of `echo` over stdio: sequential and 64 in flight; plus the server's capacity. */
sections.stdio = async () => {
  const SEQ = QUICK ? 1000 : 4000
  const PAR = QUICK ? 20000 : 60000
  // The ceiling (bench/floor.mjs) answers nothing to check: its calls only wait for a newline.
  const call = (c, cname) => (cname === 'ceiling' ? () => c.callTool() : (i) => echo(c, 'echo', i))
  const cases = {
    sequential: (c, cname) => sequentialRate(call(c, cname), SEQ),
    inflight64: (c, cname) => inFlightRate(call(c, cname), PAR, 64),
  }
  const clients = { ...stdioClients(), ceiling: () => startStdioCeiling(SERVER_NODE, SERVER_ARGS) }
  // Every round starts each client, so each with a new server process, whose JIT takes ~60,000
  // calls to warm (by 20,000-call windows, 64 in flight, Node, 2026-12-02: ~120-150k calls/s
  // rising to ~230k, with the package and the floor alike). Those calls go first, untimed, so
  // that the rounds measure the clients and not the server's warm-up (with --quick too).
  const WARM = 60000
  const prepare = (c, cname) => inFlightRate(call(c, cname), WARM, 64)
  const results = await rounds(clients, cases, { prepare })
  results.serverCapacity = { pipe: { value: await pipeCapacity(WARM, PAR) } }
  return results
}

/**
 * How fast the stdio fixture answers when the client does nearly nothing: 64 pre-serialized
 * requests written at once, answers only counted (newlines), never parsed. What a client can reach
 * at most; the floor and the package far below it means the server is not what they measure.
 */
async function pipeCapacity(warm, total) {
  const one = []
  const measure = async () => {
    const child = spawn(SERVER_NODE, SERVER_ARGS, { stdio: ['pipe', 'pipe', 'inherit'] })
    const batch = Array.from(
      { length: 64 },
      (_, i) =>
        `${JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'm' } } })}\n`,
    ).join('')
    // The first `warm` answers warm the server's JIT (see sections.stdio); the next are timed.
    const all = warm + total
    let answered = 0
    let sent = 0
    let t0 = 0
    let done
    const finished = new Promise((r) => {
      done = r
    })
    // 64 to 128 in flight: another batch of 64 whenever no more than 64 are unanswered
    const refill = () => {
      while (sent - answered <= 64 && sent < all) {
        child.stdin.write(batch)
        sent += 64
      }
    }
    child.stdout.on('data', (chunk) => {
      let i = -1
      while ((i = chunk.indexOf(10, i + 1)) !== -1) if (++answered === warm) t0 = performance.now()
      if (answered >= all) done()
      else refill()
    })
    await sleep(200) // the server starts
    refill()
    await finished
    const rate = (answered - warm) / ((performance.now() - t0) / 1000)
    child.stdin.end()
    await new Promise((r) => child.once('exit', r))
    return rate
  }
  for (let r = 0; r < 3; r++) one.push(await measure())
  return median(one)
}

/** One result of 1, 8 and 32 MiB: time to the parsed object and the longest main-thread block. */
sections.large = async () => {
  const sizes = [1, 8, 32]
  const cases = {}
  for (const mib of sizes)
    cases[`${mib}MiB`] = async (c, cname) => {
      // The SDK's stdio transport refuses messages over 10 MiB (ReadBuffer's maximum size) and then
      // closes the connection: it is not asked for 32 MiB.
      if (cname === 'sdk' && mib > 10) return { value: Number.NaN, block: Number.NaN, eld: Number.NaN }
      const bytes = mib << 20
      const m = await blockDuring(() => c.callTool('big', { bytes }))
      if (m.value.content[0].text.length !== bytes) throw new Error('wrong big result')
      return { value: m.ms, block: m.block, eld: m.eld }
    }
  // The server serializes these answers at its start (--big-ready): answering is then two writes,
  // and what is timed is the transfer and the client.
  const ready = `--big-ready=${sizes.map((mib) => mib << 20).join(',')}`
  const results = await rounds(stdioClients([ready]), cases, { warm: false, prepare: (c) => c.callTool('big', { bytes: 1 << 20 }) })
  // The block reference: a bare JSON.parse of the very line the server writes, measured the same way.
  for (const mib of sizes) {
    const line = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      result: { content: [{ type: 'text', text: 'x'.repeat(mib << 20) }] },
    })
    JSON.parse(line) // warm-up
    const blocks = []
    const times = []
    const elds = []
    for (let r = 0; r < ROUNDS; r++) {
      const m = await blockDuring(
        () =>
          new Promise((resolve) =>
            setTimeout(() => {
              const t0 = performance.now()
              const obj = JSON.parse(line)
              times.push(performance.now() - t0)
              resolve(obj)
            }, 3),
          ),
      )
      blocks.push(m.block)
      elds.push(m.eld)
    }
    results[`${mib}MiB`].bareParse = { value: median(times), block: median(blocks), eld: median(elds) }
  }
  return results
}

/** Streamable HTTP (the fixture's HTTP mode): JSON and SSE replies, sequential and 32 in flight. */
sections.http = async () => {
  // Calls a case: the SDK (~1.3-2.5k calls/s here) takes most of the section's time with these;
  // the other clients (7-100k calls/s) make 5 times as many, so that a case lasts ~0.1-1 s.
  const SEQ = QUICK ? 200 : 1000
  const PAR = QUICK ? 600 : 4000
  const n = (cname, k) => (cname === 'sdk' ? k : k * 5)
  if (!HTTP_SERVER) throw new Error('--section=http needs --http-server=PATH (bench/run.mjs builds and passes it) or =fixture')
  const server = await (HTTP_SERVER === 'fixture' ? startHttpServer(SERVER_NODE, [HTTP_FIXTURE]) : startHttpServer(HTTP_SERVER, []))
  try {
    const load = (fn) => withServerLoad([server.pid], fn)
    const cases = {
      jsonSequential: (c, cn) => load(() => sequentialRate((i) => echo(c, 'echo', i), n(cn, SEQ))).then(busyOf),
      json32: (c, cn) => load(() => inFlightRate((i) => echo(c, 'echo', i), n(cn, PAR), 32)).then(busyOf),
      sseSequential: (c, cn) => load(() => sequentialRate((i) => echo(c, 'echo-sse', i), n(cn, SEQ))).then(busyOf),
      sse32: (c, cn) => load(() => inFlightRate((i) => echo(c, 'echo-sse', i), n(cn, PAR), 32)).then(busyOf),
    }
    return await rounds(httpClients(server.url), cases)
  } finally {
    await server.close()
  }
}
// the server's CPU a request (µs) too: busy % of a core ÷ requests a second
const busyOf = (m) => ({ value: m.value, httpServerBusy: m.busy, httpServerUs: (m.busy / 100 / m.value) * 1e6 })

/**
 * The package in the 2026-07-28 era against the modern fixture over HTTP, sequential (no floor
 * speaks that era), and, as its yardstick, the package in the 2025 era against the tests' HTTP
 * fixture: both servers Node fixtures on `node:http`, so the ratio compares the eras, not the
 * servers (the `http` section's server is much faster than either).
 */
sections.modern = async () => {
  const SEQ = QUICK ? 300 : 1500
  const modern = await startHttpServer(SERVER_NODE, [MODERN_FIXTURE, '--http'])
  const legacy = await startHttpServer(SERVER_NODE, [HTTP_FIXTURE])
  try {
    const clients = {
      package: () => packageClient({ type: 'http', url: modern.url }, { protocolVersion: '2026-07-28' }),
      package2025: () => packageClient({ type: 'http', url: legacy.url }),
    }
    // the modern fixture's echo answers with the arguments' JSON, the 2025 fixture's with the message
    const expected = (cname, i) => (cname === 'package' ? JSON.stringify({ message: TEXTS[i & 4095] }) : TEXTS[i & 4095])
    const cases = {
      modernSequential: (c, cname) =>
        withServerLoad([cname === 'package' ? modern.pid : legacy.pid], () =>
          sequentialRate(
            (i) =>
              c.callTool('echo', { message: TEXTS[i & 4095] }).then((r) => {
                if (r.content[0].text !== expected(cname, i)) throw new Error(`wrong echo (${cname})`)
              }),
            SEQ,
          ),
        ).then(busyOf),
    }
    return await rounds(clients, cases)
  } finally {
    await modern.close()
    await legacy.close()
  }
}

/** Connect + tools/list of a 200-tool stdio server (a fresh server and client each time). */
sections.list = async () => {
  const REPS = QUICK ? 2 : 5
  const extra = ['--tools=200']
  const makers = stdioClients(extra)
  // The client is started inside the case: what is timed is spawn + handshake + tools/list.
  const clients = Object.fromEntries(Object.keys(makers).map((k) => [k, async () => ({ start: makers[k], close: async () => {} })]))
  const cases = {
    connectList200: async (c) => {
      const times = []
      for (let i = 0; i < REPS; i++) {
        const t0 = performance.now()
        const client = await c.start()
        const tools = await client.listTools()
        times.push(performance.now() - t0)
        if (tools.length !== 200) throw new Error(`expected 200 tools, got ${tools.length}`)
        await client.close()
      }
      return median(times)
    },
  }
  return rounds(clients, cases)
}

/** Retained RSS: nothing in flight, collected twice, median of 3 readings. */
async function retainedRss() {
  const values = []
  for (let i = 0; i < 3; i++) {
    gc()
    await sleep(50)
    gc()
    values.push(process.memoryUsage().rss)
    await sleep(50)
  }
  return median(values)
}

/** RSS growth over many calls on one connection (the package; the floor as a reference). */
sections.memory = async () => {
  const CALLS = Number(args.get('calls') ?? (QUICK ? 50_000 : 200_000))
  const which = args.get('client') ?? 'package'
  const c = await stdioClients()[which]()
  const rss = retainedRss
  // Warm-up: code compiled, heap, pools and caches at their working size. On Node the heap keeps
  // growing for the first ~100k calls (the floor's just as much): warm up in blocks of 25k calls
  // until the retained RSS stays within 1 MB from one block to the next (at most 400k calls).
  let warm = 0
  let before = await rss()
  for (;;) {
    await inFlightRate((i) => echo(c, 'echo', i), 25_000, 64)
    warm += 25_000
    const now = await rss()
    const settled = Math.abs(now - before) < 2 ** 20
    before = now
    if ((settled && warm >= 50_000) || warm >= 400_000) break
  }
  const t0 = performance.now()
  // The calls in quarters, the retained RSS after each (shows whether it levels off).
  const steps = []
  for (let q = 0; q < 4; q++) {
    await inFlightRate((i) => echo(c, 'echo', i), CALLS / 4, 64)
    steps.push((await rss()) / 2 ** 20)
  }
  const seconds = (performance.now() - t0) / 1000
  const after = steps[3] * 2 ** 20
  await c.close()
  return {
    [`rss_${which}`]: {
      [which]: { value: (after - before) / 2 ** 20, calls: CALLS, warmup: warm, before: before / 2 ** 20, steps, seconds },
    },
  }
}

/** Idle cost of a connected client: RSS and open descriptors per connection, N idle clients. */
sections.idle = async () => {
  const which = args.get('client') ?? 'package'
  const transport = args.get('transport') ?? 'stdio'
  const N = Number(args.get('clients') ?? 50)
  const server = transport === 'http' ? await startHttpServer(SERVER_NODE, [HTTP_FIXTURE]) : null
  const make = transport === 'http' ? httpClients(server.url)[which] : stdioClients()[which]
  const fds = () => readdirSync('/proc/self/fd').length
  const handles = () => (typeof process.getActiveResourcesInfo === 'function' ? process.getActiveResourcesInfo().length : Number.NaN)
  const measure = async () => ({ rss: await retainedRss(), fds: fds(), handles: handles() })
  // One client first (and closed), so that loading the code is not counted per connection.
  const first = await make()
  await first.callTool('echo', { message: 'warm' })
  await first.close()
  const before = await measure()
  const clients = []
  for (let i = 0; i < N; i++) {
    const c = await make()
    await c.callTool('echo', { message: 'hi' })
    clients.push(c)
  }
  await sleep(500) // settle: idle now
  const after = await measure()
  await Promise.all(clients.map((c) => c.close()))
  if (server) await server.close()
  return {
    [`idle_${transport}_${which}`]: {
      [which]: {
        value: (after.rss - before.rss) / N / 1024,
        fds: (after.fds - before.fds) / N,
        handles: (after.handles - before.handles) / N,
        clients: N,
      },
    },
  }
}

/** Starts an HTTP server (`command args`) that prints {"port":N}; resolves once it listens. */
async function startHttpServer(command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  const { port } = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(JSON.parse(String(d))))
    child.once('exit', (code) => reject(new Error(`HTTP fixture exited (${code})`)))
  })
  return {
    pid: child.pid,
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r))
      child.stdin.end()
      const t = setTimeout(() => child.kill('SIGKILL'), 2000)
      await exited
      clearTimeout(t)
    },
  }
}

if (!sections[SECTION]) throw new Error(`unknown --section=${SECTION}; one of ${Object.keys(sections).join(', ')}`)
const result = await sections[SECTION]()
const left = children()
if (left.length) log(`children still running: ${left.join(' ')}`)
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`)
process.exit(0)
