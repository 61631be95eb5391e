#!/usr/bin/env node
// Soak test (robustness issue): many calls through an MCPManager with `reconnect` (the 12.7 profile's
// client-level reconnect: killing a server this often would trip the root manager's crash-storm
// breaker, which is the point of that breaker), the way the agent
// makes them (tool objects from `getTools()`, and `callTool(connection, …)`), while the servers are
// killed again and again: the stdio server by SIGKILL to its pid (every third time its replacement
// too, found in the process table while it starts), the HTTP fixture by SIGKILL and a restart on
// the same port with --strict-sessions (so the client must re-initialize). It fails when
//   - RSS grows more than --rss-limit-mb (default 10) between the end of the warm-up and the end
//     (both measured the same way: calls paused, garbage collected, servers connected),
//   - any call ends without a result or a defined error (an Error with a known `code`, an abort,
//     or the tool object's `MCP error: <known message>` result), or with a wrong result,
//   - any call is still unsettled --hang-ms (default 20000) after it started,
//   - a server is given up for good, or answers nothing after its last kill,
//   - abort listeners pile up on a long-lived signal, a server process outlives disconnectAll(),
//     or the event loop stays alive after the end.
//
//   node bench/soak.mjs                   full run: 1,000,000 stdio + 200,000 HTTP calls (minutes)
//   node bench/soak.mjs --seconds=30      bounded run, calls until the time is up (CI; also SOAK_SECONDS=30)
//   npx bun bench/soak.mjs [...]          the same under Bun
// Other options: --stdio-calls=N --http-calls=N --stdio-inflight=64 --http-inflight=16
//   --stdio-kill-ms=2000 --http-kill-ms=4000 (0: never) --http-down-ms=200 --abort-every=50 --rss-limit-mb=10
//   --hang-ms=20000 --timeout-ms=5000 (the servers' request timeout)
//
// It lives in bench/ rather than __test__/: it is a measuring program that needs a process of its
// own (RSS of a test runner's worker holds other files' garbage; it needs --expose-gc, which it
// adds by re-running itself) and runs for minutes, so neither vitest nor `bun test` may pick it up.
import { spawn } from 'node:child_process'
import { getEventListeners } from 'node:events'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

import { MCPManager } from 'mcp-native/compat-12.7'
import { callTool } from 'mcp-native/compat-12.7/client'
import { FIXTURE, NODE, ROOT, processesWith } from '../__test__/helpers.mjs'

const IS_BUN = !!process.versions.bun
const RUNTIME = IS_BUN ? `bun ${process.versions.bun}` : `node ${process.version}`

function options() {
  const args = new Map(
    process.argv.slice(2).map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=')
      return [k, v ?? 'true']
    }),
  )
  const num = (name, dflt) => {
    const v = args.has(name) ? Number(args.get(name)) : dflt
    if (Number.isNaN(v) || v < 0) throw new Error(`--${name} must be a non-negative number`)
    return v
  }
  const seconds = num('seconds', Number(process.env.SOAK_SECONDS ?? 0))
  return {
    seconds,
    // A timed run calls until the time is up, unless counts are given too.
    stdioCalls: num('stdio-calls', seconds > 0 ? Number.POSITIVE_INFINITY : 1_000_000),
    httpCalls: num('http-calls', seconds > 0 ? Number.POSITIVE_INFINITY : 200_000),
    stdioInflight: num('stdio-inflight', 64),
    httpInflight: num('http-inflight', 16),
    stdioKillMs: num('stdio-kill-ms', 2000),
    httpKillMs: num('http-kill-ms', 4000),
    httpDownMs: num('http-down-ms', 200),
    abortEvery: num('abort-every', 50),
    rssLimitMb: num('rss-limit-mb', 10),
    hangMs: num('hang-ms', 20000),
    timeoutMs: num('timeout-ms', 5000),
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const mb = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10

/** Codes a rejected `callTool` may carry (SPEC: "a stable string such as …"). */
const KNOWN_CODES = new Set([
  'MCP_TRANSPORT_CLOSED',
  'MCP_TIMEOUT',
  'MCP_NOT_CONNECTED',
  'MCP_HTTP_ERROR',
  'MCP_SESSION_EXPIRED',
  'MCP_IO_ERROR',
  'MCP_RPC_ERROR',
  'MCP_NO_RESPONSE',
  'MCP_PARSE_ERROR',
])

/** The tool object turns errors into `MCP error: <message>`: the messages SPEC defines, by code. */
const TOOL_MESSAGES = [
  [/^Transport closed$/, 'MCP_TRANSPORT_CLOSED'],
  [/^Transport not connected$/, 'MCP_NOT_CONNECTED'],
  [/^(Request|SSE response) timeout after \d+ms$/, 'MCP_TIMEOUT'],
  [/^HTTP \d{3}: /, 'MCP_HTTP_ERROR'],
  [/^(fetch failed|reading the response failed|SSE stream failed): /, 'MCP_IO_ERROR'],
  [/^MCP error -?\d+: /, 'MCP_RPC_ERROR'],
  [/^No response received for request ID \d+$/, 'MCP_NO_RESPONSE'],
  [/^(No response body|SSE stream ended unexpectedly|Invalid JSON response: )/, 'MCP_PARSE_ERROR'],
]

function isAbortError(err, signal) {
  return !!signal?.aborted && (err === signal.reason || err?.name === 'AbortError' || err?.name === 'ToolAbortError')
}

function describe(value) {
  if (value instanceof Error) {
    const own = {}
    for (const k of Object.keys(value)) own[k] = value[k]
    return `${value.name}: ${value.message} ${JSON.stringify(own)}`.slice(0, 400)
  }
  try {
    return JSON.stringify(value).slice(0, 400)
  } catch {
    return String(value).slice(0, 400)
  }
}

/** The project's HTTP fixture as a child process that can be killed and restarted on its port. */
class HttpFixture {
  constructor(marker) {
    this.marker = marker
    this.child = null
    this.port = 0
  }

  async start() {
    for (let attempt = 0; ; attempt++) {
      const args = [join(ROOT, '__test__', 'fixture', 'http-server.mjs'), `--port=${this.port}`, '--strict-sessions', this.marker]
      const child = spawn(NODE, args, { stdio: ['pipe', 'pipe', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)))
      const port = await new Promise((resolve) => {
        let out = ''
        child.stdout.on('data', (d) => {
          out += d
          const nl = out.indexOf('\n')
          if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)).port)
        })
        child.once('exit', () => resolve(null))
      })
      if (port) {
        this.child = child
        this.port = port
        return
      }
      // The port may still be held for a moment after the previous process died.
      if (attempt === 50) throw new Error(`HTTP fixture did not start: ${stderr}`)
      await sleep(100)
    }
  }

  async kill() {
    const child = this.child
    this.child = null
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
  }
}

async function main() {
  const o = options()
  const timed = o.seconds > 0
  const gc = IS_BUN ? () => globalThis.Bun.gc(true) : globalThis.gc
  const stdioMarker = `--marker=mcp-native-soak-stdio-${process.pid}`
  const httpMarker = `--marker=mcp-native-soak-http-${process.pid}`
  const failures = []
  const fail = (text) => {
    if (failures.length < 50) failures.push(text)
  }

  // Memory, measured the same way at both ends: no call in flight, collected, servers connected.
  async function retainedRss() {
    const values = []
    for (let i = 0; i < 3; i++) {
      gc()
      await sleep(100)
      gc()
      values.push(process.memoryUsage().rss)
      await sleep(150)
    }
    return values.sort((a, b) => a - b)[1]
  }

  const rssStart = process.memoryUsage().rss
  const http = new HttpFixture(httpMarker)
  await http.start()

  const statuses = {}
  const gaveUp = []
  const logs = { error: [], warn: [], debug: [] }
  const logCounts = { error: 0, warn: 0, debug: 0 }
  const record = (level) => (message, details) => {
    logCounts[level]++
    if (logs[level].length < 20) logs[level].push(details === undefined ? message : `${message} ${describe(details)}`)
  }
  let running = true
  const manager = new MCPManager(ROOT, null, {
    reconnect: { maxAttempts: 1000, initialDelayMs: 20, maxDelayMs: 500 },
    logger: { error: record('error'), warn: record('warn'), debug: record('debug') },
    onServerStatus: (name, status, error) => {
      const key = `${name}:${status}`
      statuses[key] = (statuses[key] ?? 0) + 1
      if (status === 'disconnected' && running) gaveUp.push(`${name}: ${error ? describe(error) : 'disconnected'}`)
    },
  })
  const configs = {
    stdio: { command: NODE, args: [FIXTURE, stdioMarker], timeout: o.timeoutMs },
    http: { type: 'http', url: `http://127.0.0.1:${http.port}/mcp`, timeout: o.timeoutMs },
  }
  const connected = await manager.connectServers(configs, {})
  if (connected.errors.size > 0) throw new Error(`connectServers failed: ${describe([...connected.errors])}`)
  const toolNames = { stdio: ['mcp_stdio_echo'], http: ['mcp_http_echo', 'mcp_http_echo_sse'] }
  const mcpNames = { mcp_stdio_echo: 'echo', mcp_http_echo: 'echo', mcp_http_echo_sse: 'echo-sse' }
  for (const n of [...toolNames.stdio, ...toolNames.http]) {
    if (!manager.getTools().some((t) => t.name === n)) throw new Error(`tool ${n} missing after connect`)
  }

  // --- the calls ----------------------------------------------------------------------------
  const stats = {
    stdio: { started: 0, done: 0, ok: 0, errors: {}, unexpected: 0, lastOk: 0, lastKill: 0, kills: 0, startupKills: 0 },
    http: { started: 0, done: 0, ok: 0, errors: {}, unexpected: 0, lastOk: 0, lastKill: 0, kills: 0 },
  }
  const inflight = new Map() // call number → { server, start, what }
  let callSeq = 0
  let stop = false
  let pause = null // a promise while the calls are paused for a measurement
  const longLived = { stdio: [], http: [] } // one never-aborted signal per worker

  /** Counts a defined error; returns true (it was an error). */
  function count(server, code) {
    const e = stats[server].errors
    e[code] = (e[code] ?? 0) + 1
    return true
  }

  /** Classifies one outcome; returns true when it was an error (the worker then backs off). */
  function judge(server, via, message, signal, outcome) {
    const s = stats[server]
    s.done++
    if ('error' in outcome) {
      const err = outcome.error
      if (isAbortError(err, signal)) return count(server, 'ABORTED')
      if (via === 'callTool' && err instanceof Error && KNOWN_CODES.has(err.code)) return count(server, err.code)
      s.unexpected++
      fail(`${server}/${via}: unexpected rejection ${describe(err)}`)
      return true
    }
    const r = outcome.value
    const text = r?.content?.[0]?.text
    if (via === 'callTool') {
      if (r && Array.isArray(r.content) && r.content.length === 1 && r.content[0].type === 'text' && text === message && !r.isError) {
        s.ok++
        s.lastOk = performance.now()
        return false
      }
    } else if (r && Array.isArray(r.content) && r.content.length === 1 && r.content[0].type === 'text' && r.details) {
      // SPEC 8.1: details.isError is the server's `isError` as sent — undefined when absent.
      if (text === message && !r.details.isError) {
        s.ok++
        s.lastOk = performance.now()
        return false
      }
      if (r.details.isError === true && typeof text === 'string' && text.startsWith('MCP error: ')) {
        const m = text.slice('MCP error: '.length)
        const known = TOOL_MESSAGES.find(([re]) => re.test(m))
        if (known) return count(server, known[1])
      }
    }
    s.unexpected++
    fail(`${server}/${via}: unexpected result ${describe(r)} (expected text ${message})`)
    return true
  }

  async function worker(server, target, longSignal) {
    const tools = toolNames[server]
    while (!stop && stats[server].started < target) {
      if (pause) await pause
      if (stop) break
      const n = stats[server].started++
      const id = ++callSeq
      const message = `${server}-${n}`
      const toolName = tools[n % tools.length]
      const via = (n >> 1) % 2 === 0 ? 'tool' : 'callTool'
      let signal = longSignal
      if (o.abortEvery > 0 && n % o.abortEvery === 0) {
        const ac = new AbortController()
        setTimeout(() => ac.abort(), n % 3)
        signal = ac.signal
      }
      inflight.set(id, { server, start: performance.now(), what: `${via} ${toolName} ${message}` })
      let outcome
      try {
        if (via === 'tool') {
          const tool = manager.getTools().find((t) => t.name === toolName)
          if (!tool) throw Object.assign(new Error(`tool ${toolName} missing`), { soak: true })
          outcome = { value: await tool.execute(`call-${id}`, { message }, undefined, undefined, signal) }
        } else {
          const connection = manager.getConnection(server)
          if (!connection) throw Object.assign(new Error(`no connection for ${server}`), { soak: true })
          outcome = { value: await callTool(connection, mcpNames[toolName], { message }, { signal }) }
        }
      } catch (error) {
        outcome = { error }
      }
      inflight.delete(id)
      if (outcome.error?.soak) {
        // The manager dropped the server or its tools: nothing to call. Counted, not a crash.
        count(server, 'SOAK_NOTHING_TO_CALL')
        stats[server].done++
        await sleep(10)
        continue
      }
      // After an error, back off a little, as an agent would: no hot loop against a dead server.
      if (judge(server, via, message, signal, outcome)) await sleep(5)
    }
  }

  // --- the killers --------------------------------------------------------------------------
  let killing = Promise.resolve()
  // A server is killed only while its own calls run (the check "answered after its last kill"
  // needs calls after the kill).
  const calling = (server) => stats[server].started < (server === 'stdio' ? o.stdioCalls : o.httpCalls)
  const sigkill = (pid) => {
    try {
      process.kill(pid, 'SIGKILL')
      stats.stdio.kills++
      stats.stdio.lastKill = performance.now()
      return true
    } catch {
      return false // already gone
    }
  }
  let stdioRound = 0
  function killStdio() {
    if (pause || stop || !calling('stdio')) return
    const pid = manager.getConnection('stdio')?.transport?.pid
    if (!pid || !sigkill(pid)) return // between processes: next time
    // Every third time, the replacement too, found in the process table while it starts or
    // shakes hands: a reconnect attempt that fails must be retried, not end the server.
    if (++stdioRound % 3 === 0) {
      const until = performance.now() + 500
      const look = () => {
        if (pause || stop) return
        const fresh = processesWith(stdioMarker).filter((p) => p !== pid)
        let hit = false
        for (const p of fresh) if (sigkill(p)) hit = true
        if (hit) stats.stdio.startupKills++
        else if (performance.now() < until) setTimeout(look, 2).unref()
      }
      look()
    }
  }
  function killHttp() {
    if (pause || stop || !calling('http')) return
    killing = killing.then(async () => {
      await http.kill()
      stats.http.kills++
      stats.http.lastKill = performance.now()
      await sleep(o.httpDownMs)
      await http.start()
    })
  }

  // --- the run ------------------------------------------------------------------------------
  const t0 = performance.now()
  const samples = [] // { t, rss, calls } every second, under load, not collected
  let last = { t: t0, calls: 0 }
  const doneCalls = () => stats.stdio.done + stats.http.done
  const progress = setInterval(() => {
    const now = performance.now()
    const rss = process.memoryUsage().rss
    samples.push({ t: Math.round((now - t0) / 1000), rss: mb(rss), calls: doneCalls() })
    for (const [id, c] of inflight) {
      if (now - c.start > o.hangMs && !c.reported) {
        c.reported = true
        fail(`hang: ${c.server} ${c.what} unsettled after ${Math.round(now - c.start)} ms (call ${id})`)
      }
    }
    if (samples.length % 5 === 0) {
      const rate = Math.round(((doneCalls() - last.calls) * 1000) / (now - last.t))
      last = { t: now, calls: doneCalls() }
      const line = (s) => `${s.done} (${s.ok} ok, ${s.done - s.ok} err, ${s.kills} kills)`
      console.log(
        `${Math.round((now - t0) / 1000)}s  stdio ${line(stats.stdio)}  http ${line(stats.http)}  ${rate}/s  rss ${mb(rss)} MB  in flight ${inflight.size}`,
      )
    }
  }, 1000)
  const stdioKiller = o.stdioKillMs > 0 ? setInterval(killStdio, o.stdioKillMs) : undefined
  const httpKiller = o.httpKillMs > 0 ? setInterval(killHttp, o.httpKillMs) : undefined

  const workers = []
  for (let i = 0; i < o.stdioInflight; i++) {
    const signal = new AbortController().signal
    longLived.stdio.push(signal)
    workers.push(worker('stdio', o.stdioCalls, signal))
  }
  for (let i = 0; i < o.httpInflight; i++) {
    const signal = new AbortController().signal
    longLived.http.push(signal)
    workers.push(worker('http', o.httpCalls, signal))
  }

  /** Pauses the calls and kills, waits until nothing is in flight and both servers are up. */
  async function quiesce() {
    let resume
    pause = new Promise((r) => (resume = r))
    await killing
    const deadline = performance.now() + o.hangMs
    while (inflight.size > 0 && performance.now() < deadline) await sleep(20)
    while (manager.getConnectionStatus('stdio') !== 'connected' && performance.now() < deadline) await sleep(20)
    // One successful call each, so that the HTTP session is re-established before measuring.
    for (const name of ['stdio', 'http']) {
      for (let i = 0; i < 100; i++) {
        const connection = manager.getConnection(name)
        const ok =
          connection !== undefined &&
          (await callTool(connection, 'echo', { message: 'probe' }).then(
            () => true,
            () => false,
          ))
        if (ok) {
          stats[name].lastOk = performance.now()
          break
        }
        await sleep(50)
      }
    }
    return () => {
      pause = null
      resume()
    }
  }

  // Warm-up: a third of the time (timed run), or a tenth of the calls.
  const warmTarget = timed ? 0 : Math.floor((o.stdioCalls + o.httpCalls) / 10)
  const warmEnd = t0 + Math.max(3000, (o.seconds * 1000) / 3)
  while (timed ? performance.now() < warmEnd : doneCalls() < warmTarget) {
    if (stats.stdio.started >= o.stdioCalls && stats.http.started >= o.httpCalls) break
    await sleep(100)
  }
  let resume = await quiesce()
  const rssWarm = await retainedRss()
  const warmCalls = doneCalls()
  const tWarm = performance.now()
  resume()
  console.log(`warm-up done after ${warmCalls} calls: retained RSS ${mb(rssWarm)} MB`)

  const endAt = t0 + o.seconds * 1000
  if (timed) {
    while (performance.now() < endAt && workers.length > 0) {
      if (stats.stdio.started >= o.stdioCalls && stats.http.started >= o.httpCalls) break
      await sleep(100)
    }
    resume = await quiesce()
  } else {
    await Promise.all(workers)
    resume = await quiesce()
  }
  const rssEnd = await retainedRss()
  const tEnd = performance.now()
  stop = true
  resume()
  let drainTimer
  await Promise.race([Promise.all(workers), new Promise((r) => (drainTimer = setTimeout(r, o.hangMs)))])
  clearTimeout(drainTimer)
  clearInterval(stdioKiller)
  clearInterval(httpKiller)
  clearInterval(progress)
  await killing
  running = false
  for (const [id, c] of inflight) fail(`hang: ${c.server} ${c.what} never settled (call ${id})`)

  // --- checks after the run -------------------------------------------------------------------
  for (const g of gaveUp) fail(`the manager gave a server up: ${g}`)
  for (const name of ['stdio', 'http']) {
    const s = stats[name]
    if (s.ok === 0) fail(`${name}: no call succeeded`)
    else if (s.kills > 0 && s.lastOk < s.lastKill) fail(`${name}: no call succeeded after the last kill`)
  }
  if (!IS_BUN) {
    for (const [name, signals] of Object.entries(longLived)) {
      const left = signals.reduce((n, s) => n + getEventListeners(s, 'abort').length, 0)
      if (left > 0) fail(`${name}: ${left} abort listeners left on long-lived signals`)
    }
  }
  const growth = rssEnd - rssWarm
  if (growth > o.rssLimitMb * 2 ** 20) fail(`RSS grew ${mb(growth)} MB after warm-up (limit ${o.rssLimitMb} MB)`)

  await manager.disconnectAll()
  await http.kill()
  const leftovers = await (async () => {
    for (let i = 0; i < 50; i++) {
      const left = [...processesWith(stdioMarker), ...processesWith(httpMarker)]
      if (left.length === 0) return left
      await sleep(100)
    }
    return [...processesWith(stdioMarker), ...processesWith(httpMarker)]
  })()
  if (leftovers.length > 0) fail(`server processes still running after disconnectAll: ${leftovers.join(', ')}`)
  const rssIdle = process.memoryUsage().rss

  const seconds = (tEnd - t0) / 1000
  const summary = {
    runtime: RUNTIME,
    mode: timed ? `${o.seconds} s` : 'full',
    options: o,
    durationS: Math.round(seconds * 10) / 10,
    calls: {
      total: doneCalls(),
      perSecond: Math.round(doneCalls() / seconds),
      stdio: { done: stats.stdio.done, ok: stats.stdio.ok, unexpected: stats.stdio.unexpected, errors: stats.stdio.errors },
      http: { done: stats.http.done, ok: stats.http.ok, unexpected: stats.http.unexpected, errors: stats.http.errors },
    },
    kills: { stdio: stats.stdio.kills, stdioWhileStarting: stats.stdio.startupKills, http: stats.http.kills },
    rssMb: {
      start: mb(rssStart),
      afterWarmup: mb(rssWarm),
      end: mb(rssEnd),
      growth: mb(growth),
      growthPer100kCalls: mb((growth / Math.max(1, doneCalls() - warmCalls)) * 100000),
      maxUnderLoad: Math.max(...samples.map((s) => s.rss)),
      afterDisconnect: mb(rssIdle),
    },
    warmup: { calls: warmCalls, seconds: Math.round((tWarm - t0) / 100) / 10 },
    serverStatus: statuses,
    logger: { counts: logCounts, first: logs },
    failures,
  }
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
  const file = join(ROOT, 'bench', 'results', `soak-${IS_BUN ? 'bun' : 'node'}-${timed ? `${o.seconds}s` : 'full'}.json`)
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), ...summary, samples }, null, 2))

  console.log(`\nsoak (${RUNTIME}, ${summary.mode}): ${summary.durationS} s, ${doneCalls()} calls (${summary.calls.perSecond}/s)`)
  for (const name of ['stdio', 'http']) {
    const s = summary.calls[name]
    const kills = name === 'stdio' ? `${stats.stdio.kills} kills (${stats.stdio.startupKills} while starting)` : `${stats.http.kills} kills`
    console.log(`  ${name}: ${s.done} calls, ${s.ok} ok, ${kills}, errors ${JSON.stringify(s.errors)}`)
  }
  const r = summary.rssMb
  console.log(
    `  RSS MB: start ${r.start}, after warm-up ${r.afterWarmup}, end ${r.end} (growth ${r.growth}, limit ${o.rssLimitMb}), max under load ${r.maxUnderLoad}`,
  )
  console.log(`  server status: ${JSON.stringify(statuses)}; logger: ${JSON.stringify(logCounts)}`)
  console.log(`  written to ${file}`)
  if (failures.length > 0) {
    console.log(`FAIL (${failures.length}):`)
    for (const f of failures) console.log(`  - ${f}`)
    process.exitCode = 1
  } else {
    console.log('PASS')
  }
  // The run must end by itself: if anything keeps the event loop alive, that is a failure too.
  setTimeout(() => {
    console.log('FAIL: the event loop is still alive 10 s after the end (something holds it)')
    if (process.env.SOAK_DEBUG_HANDLES) {
      for (const h of process._getActiveHandles())
        console.log(h.constructor?.name, h._type, h.fd, h.spawnfile, h.pid, h.remotePort, h.localPort, h._isStdio)
      for (const r of process._getActiveRequests()) console.log('request', r.constructor?.name)
    }
    process.exit(1)
  }, 10000).unref()
}

// Under Node, garbage collection must be callable to measure retained memory: re-run with it.
if (!IS_BUN && typeof globalThis.gc !== 'function') {
  const child = spawn(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' })
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
} else {
  await main()
}
