#!/usr/bin/env node
// The fault suite's chaos server: a real (small) MCP server — `initialize`, `tools/list`,
// `tools/call`, `ping` — that misbehaves as its fault plan says. One program, three roles:
//   --role=stdio      (default) newline-delimited JSON on stdin/stdout
//   --role=http       Streamable HTTP on 127.0.0.1:0 (POST/GET/DELETE /mcp; with plan.legacy the
//                     2024-11-05 HTTP+SSE protocol: GET /mcp → `endpoint` → POST /messages);
//                     prints {"port":N} as its only stdout line
//   --role=grandchild a process in the server's group that ignores SIGTERM and just lives on
// Other flags:
//   --plan=JSON       the fault plan (made by plan.mjs from the case seed; printed with a failure)
//   --state=FILE      counts the server's lives (a reconnect spawns a new life): with
//                     plan.faultyLives = N > 0 only the first N lives (stdio) or sessions (HTTP)
//                     misbehave, so that a reconnect can succeed
//   --marker=TEXT     ignored: lets the runner find the case's processes in /proc
//   --max-life-ms=MS  exits after MS (default 60000) whatever happens: a safety net so that a
//                     crashed runner leaves nothing behind for long (checks run within seconds)
// The server's own random choices (where to cut a frame, which garbage) come from plan.seed, so
// a case runs the same way again from its seed, up to timing.
//
// Tools (tools/call {name, arguments}): echo {message} → text; slow {ms, message} → text after
// ms; big {bytes} → a text of that size; notify {count, message} → `count` notifications, then
// text; progress {steps, message} → notifications/progress to the progress token, then text.
// Every answer names the request's own `message`, so the runner can tell a mixed-up answer.
//
// Stdio faults (plan.faults, each optional):
//   exitAt {frame, fraction, code?, signal?}  write `fraction` of outgoing frame number `frame`
//                                   (0 = the initialize answer), then exit (or kill itself)
//   garbage {p, kinds}              before a frame, with probability p, a garbage line: text,
//                                   non-objects, cut JSON, binary, stray ids, deep nesting, …
//   partial {p, pauseMs}            a frame written in 2–5 pieces with pauses
//   stallAfter N                    answer N requests, then never again (keeps reading)
//   stallP p                        leave each request unanswered with probability p
//   stderrFlood {bytes, everyMs, chunk}  bytes to stderr at start, then chunk every everyMs
//   ignoreSigterm, grandchildren N  SIGTERM ignored; N grandchildren that ignore it too
//   grandchildInherits              those grandchildren hold the server's stdin/stdout/stderr
//                                   (as wrappers do): stdout does not end when the server exits
//   freezeAfterMs                   the server stops itself (SIGSTOP): no answers, no SIGTERM handling
//   closeStdinAfterMs, closeStdoutAfterMs, exitAfterMs {ms, code?, signal?}, pauseStdinMs
//   initHang, initError, badVersion, initDelayMs, answerDelayMs (random 0..N per answer)
//   rpcErrorP, dupP, strayIdP, reverseP, listChangedP, notifyFloodP, oversize {p, bytes}
// HTTP faults (plan.faults): burst5xx {from, count, statuses}, dropP (socket destroyed before
//   any answer), stallP (request never answered), slowHeaders {p, ms}, slowBody {p, pauseMs},
//   sseP (answer as SSE), resetSseP (socket destroyed at a random byte of an SSE answer),
//   eventIds + retryMs (SSE events carry ids, so a broken reply is resumed) with resume
//   'answer' | 'reset' | 'hang' | '404', garbageP {kinds} (non-JSON 200, garbage SSE, wrong
//   content type, empty body, cut JSON), expire {after, how: 404|400}, notifyFault
//   '500'|'hang'|'reset', get '405'|'hang'|'reset'|'close'|'notify'|'garbage'|'500',
//   delete 'ok'|'404'|'hang'|'reset'|'500', exitAfterMs (the whole server goes away),
//   initDelayMs, initError, badVersion, answerDelayMs, rpcErrorP, reverseP, trickleP (SSE
//   headers, then a comment every 50 ms and never the answer), oversize {p, bytes} (the answer
//   event is that big).
//   legacy {resetAfter, garbageP}: the 2024-11-05 protocol (POST /mcp answers 405).
import { spawn } from 'node:child_process'
import { closeSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { prng } from './prng.mjs'

const args = new Map(
  process.argv.slice(2).map((a) => {
    const i = a.indexOf('=')
    return i < 0 ? [a.replace(/^--/, ''), 'true'] : [a.slice(0, i).replace(/^--/, ''), a.slice(i + 1)]
  }),
)
const role = args.get('role') ?? 'stdio'
const plan = JSON.parse(args.get('plan') ?? '{}')
const marker = args.get('marker') ?? ''
const maxLife = Number(args.get('max-life-ms') ?? 60000)
const SELF = fileURLToPath(import.meta.url)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// The safety net: never outlive a runner by long. Unref'd: it must not keep a server alive.
setTimeout(() => process.exit(70), maxLife).unref()

if (role === 'grandchild') {
  process.on('SIGTERM', () => {})
  setInterval(() => {}, 1000)
} else {
  const life = nextLife()
  const rnd = prng((plan.seed ?? 1) + life * 7919)
  if (role === 'http') httpServer(rnd)
  else stdioServer(rnd, life)
}

/** This process's life number (1 for the first spawn of the case), counted in --state. */
function nextLife() {
  const file = args.get('state')
  if (!file) return 1
  let n = 0
  try {
    n = Number(readFileSync(file, 'utf8')) || 0
  } catch {
    // first life
  }
  try {
    writeFileSync(file, String(n + 1))
  } catch {
    // the runner removed the directory: count as a later life
  }
  return n + 1
}

function faultyFor(n) {
  const lives = plan.faultyLives ?? 0
  return lives === 0 || n <= lives
}

function spawnGrandchild(inherit) {
  spawn(process.execPath, [SELF, '--role=grandchild', `--marker=${marker}`, `--max-life-ms=${maxLife}`], {
    stdio: inherit ? 'inherit' : 'ignore',
  })
}

const TOOLS = [
  { name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } },
  { name: 'slow', description: 'Answers after {ms}', inputSchema: { type: 'object', properties: { ms: { type: 'number' } } } },
  { name: 'big', description: 'A text of {bytes}', inputSchema: { type: 'object', properties: { bytes: { type: 'number' } } } },
  { name: 'notify', description: 'Notifications, then text', inputSchema: { type: 'object' } },
  { name: 'progress', description: 'Progress, then text', inputSchema: { type: 'object' } },
]

/** Garbage that is not a valid answer to any pending request (stray ids never match ours). */
function garbage(rnd, kinds) {
  const kind = rnd.pick(kinds?.length ? kinds : GARBAGE_KINDS)
  switch (kind) {
    case 'text':
      return Buffer.from('this is not json {{{ ]]\n')
    case 'nonobject':
      return Buffer.from(`${rnd.pick(['5', 'null', '"x"', '[1,2,3]', 'true', '-0.5e9'])}\n`)
    case 'cut':
      return Buffer.from('{"jsonrpc":"2.0","id":"chaos-cut","result":{"a":\n')
    case 'binary': {
      const b = Buffer.alloc(rnd.int(1, 300))
      for (let i = 0; i < b.length; i++) {
        const v = rnd.int(0, 255)
        b[i] = v === 10 ? 0 : v
      }
      return Buffer.concat([b, Buffer.from('\n')])
    }
    case 'stray':
      return Buffer.from(`{"jsonrpc":"2.0","id":"chaos-stray-${rnd.int(0, 1e6)}","result":{"stray":true}}\n`)
    case 'nullid':
      return Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"chaos parse error"}}\n')
    case 'blank':
      return Buffer.from('\n\r\n   \n\t\n')
    case 'weird':
      return Buffer.from(
        `${rnd.pick(['{"jsonrpc":"2.0","method":123}', '{"id":{},"result":1}', '{"jsonrpc":"1.0","id":[],"method":null}', '{"method":"x","id":true}', '{}'])}\n`,
      )
    case 'deep': {
      const depth = rnd.int(200, 20000)
      return Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}\n`)
    }
    case 'badutf8':
      return Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}}\n'),
      ])
    case 'noise':
      return Buffer.from(`${'n'.repeat(rnd.int(1000, 300000))}\n`)
    case 'note':
      return Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"chaos"}}\n')
    default:
      return Buffer.from('?\n')
  }
}
const GARBAGE_KINDS = ['text', 'nonobject', 'cut', 'binary', 'stray', 'nullid', 'blank', 'weird', 'deep', 'badutf8', 'noise', 'note']

/** The result of a tools/call, or null for a tool that answers in its own way. */
function toolText(params) {
  const a = params?.arguments ?? {}
  return String(a.message ?? '')
}

// ------------------------------------------------------------------------------------------
// stdio

function stdioServer(rnd, life) {
  const f = faultyFor(life) ? (plan.faults ?? {}) : {}
  if (f.ignoreSigterm) process.on('SIGTERM', () => {})
  for (let i = 0; i < (f.grandchildren ?? 0); i++) spawnGrandchild(f.grandchildInherits)
  if (f.freezeAfterMs !== undefined) setTimeout(() => process.kill(process.pid, 'SIGSTOP'), f.freezeAfterMs)
  // A server lives until killed or told to exit, even with stdin closed.
  setInterval(() => {}, 1000)

  let outClosed = false
  process.stdout.on('error', () => {
    outClosed = true
  })
  process.stderr.on('error', () => {})
  // Every write goes through one chain, so pieces and pauses keep their order.
  let chain = Promise.resolve()
  const later = (fn) => {
    chain = chain.then(fn).catch(() => {})
  }
  const writeOut = (buf) =>
    new Promise((resolve) => {
      if (outClosed) return resolve()
      try {
        process.stdout.write(buf, () => resolve())
      } catch {
        outClosed = true
        resolve()
      }
    })
  const die = (how) => {
    process.stderr.write(`chaos: dying (${JSON.stringify(how)})\n`)
    if (how.signal) process.kill(process.pid, how.signal)
    else process.exit(how.code ?? 1)
  }

  let frames = 0
  function send(obj) {
    const buf = Buffer.from(`${JSON.stringify(obj)}\n`)
    const n = frames++
    if (f.garbage && rnd.chance(f.garbage.p)) {
      const g = garbage(rnd, f.garbage.kinds)
      later(() => writeOut(g))
    }
    if (f.exitAt && n === f.exitAt.frame) {
      const cut = Math.floor(buf.length * f.exitAt.fraction)
      later(async () => {
        await writeOut(buf.subarray(0, cut))
        die(f.exitAt)
        await new Promise(() => {}) // a signal is on its way: write nothing more
      })
      return
    }
    if (f.partial && rnd.chance(f.partial.p) && buf.length > 2) {
      const pieces = rnd.int(2, Math.min(5, buf.length))
      const cuts = [...new Set(Array.from({ length: pieces - 1 }, () => rnd.int(1, buf.length - 1)))].sort((a, b) => a - b)
      let at = 0
      for (const c of [...cuts, buf.length]) {
        const piece = buf.subarray(at, c)
        const pause = rnd.int(0, f.partial.pauseMs ?? 30)
        at = c
        later(async () => {
          await writeOut(piece)
          if (c < buf.length) await sleep(pause)
        })
      }
      return
    }
    later(() => writeOut(buf))
  }

  if (f.stderrFlood) {
    const { bytes = 0, everyMs, chunk = 4096 } = f.stderrFlood
    if (bytes > 0) process.stderr.write('e'.repeat(bytes))
    if (everyMs) setInterval(() => process.stderr.write(`${'f'.repeat(chunk - 1)}\n`), everyMs)
  }
  if (f.exitAfterMs) setTimeout(() => die(f.exitAfterMs), f.exitAfterMs.ms)
  if (f.closeStdinAfterMs !== undefined) setTimeout(() => process.stdin.destroy(), f.closeStdinAfterMs)
  if (f.closeStdoutAfterMs !== undefined)
    setTimeout(() => {
      outClosed = true
      try {
        closeSync(1)
      } catch {
        // already closed
      }
    }, f.closeStdoutAfterMs)

  let answered = 0
  let reverseSeq = 0
  function answer(id, method, params) {
    if (f.stallAfter !== undefined && answered >= f.stallAfter) return
    if (f.stallP && rnd.chance(f.stallP)) return
    const go = () => respond(id, method, params)
    const delay = method === 'initialize' ? (f.initDelayMs ?? 0) : f.answerDelayMs ? rnd.int(0, f.answerDelayMs) : 0
    if (delay > 0) setTimeout(go, delay)
    else go()
  }

  function extras() {
    if (f.reverseP && rnd.chance(f.reverseP)) {
      const method = rnd.pick(['ping', 'roots/list', 'sampling/createMessage', 'elicitation/create', 'chaos/unknown'])
      send({ jsonrpc: '2.0', id: `chaos-rev-${++reverseSeq}`, method, params: {} })
    }
    if (f.listChangedP && rnd.chance(f.listChangedP)) send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
    if (f.notifyFloodP && rnd.chance(f.notifyFloodP)) {
      const n = rnd.int(20, 400)
      for (let i = 0; i < n; i++) send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'debug', data: `flood ${i}` } })
    }
  }

  function finish(id, result) {
    answered++
    extras()
    if (f.strayIdP && rnd.chance(f.strayIdP)) send({ jsonrpc: '2.0', id: `chaos-stray-${id}`, result: { stray: true } })
    if (f.rpcErrorP && rnd.chance(f.rpcErrorP)) {
      send({ jsonrpc: '2.0', id, error: { code: rnd.pick([-32603, -32000, -1, 42]), message: 'chaos refused' } })
      return
    }
    if (f.oversize && rnd.chance(f.oversize.p)) {
      send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'o'.repeat(f.oversize.bytes) }] } })
      return
    }
    send({ jsonrpc: '2.0', id, result })
    if (f.dupP && rnd.chance(f.dupP)) send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'chaos duplicate' }] } })
  }

  function respond(id, method, p) {
    switch (method) {
      case 'initialize':
        if (f.initHang) return
        if (f.initError) {
          answered++
          return send({ jsonrpc: '2.0', id, error: { code: -32603, message: 'chaos initialize refused' } })
        }
        return finish(id, {
          protocolVersion: f.badVersion ? '1999-01-01' : (p?.protocolVersion ?? '2025-03-26'),
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: 'chaos', version: String(life) },
        })
      case 'tools/list':
        return finish(id, { tools: TOOLS })
      case 'ping':
        return finish(id, {})
      case 'tools/call': {
        const a = p?.arguments ?? {}
        const text = toolText(p)
        const content = (t) => ({ content: [{ type: 'text', text: t }] })
        switch (p?.name) {
          case 'echo':
            return finish(id, content(text))
          case 'slow':
            return setTimeout(() => finish(id, content(text)), Number(a.ms ?? 100))
          case 'big':
            return finish(id, content(`${text}${'b'.repeat(Number(a.bytes ?? 1000))}`))
          case 'notify':
            for (let i = 0; i < Number(a.count ?? 3); i++) send({ jsonrpc: '2.0', method: 'chaos/note', params: { i, of: text } })
            return finish(id, content(text))
          case 'progress': {
            const token = p?._meta?.progressToken
            const steps = Number(a.steps ?? 3)
            let i = 0
            const tick = () => {
              if (i === steps) return finish(id, content(text))
              i++
              if (token !== undefined)
                send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } })
              setTimeout(tick, 20)
            }
            return tick()
          }
          default:
            return finish(id, { content: [{ type: 'text', text: `unknown tool ${p?.name}` }], isError: true })
        }
      }
      default:
        answered++
        return send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } })
    }
  }

  function onLine(line) {
    let msg
    try {
      msg = JSON.parse(line)
    } catch {
      return
    }
    if (!msg || typeof msg !== 'object') return
    if (msg.method === undefined) return // an answer to one of our requests
    if (msg.id === undefined || msg.id === null) return // a notification
    answer(msg.id, msg.method, msg.params)
  }

  let buffered = ''
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (chunk) => {
    buffered += chunk
    let nl = buffered.indexOf('\n')
    while (nl >= 0) {
      const line = buffered.slice(0, nl).trim()
      buffered = buffered.slice(nl + 1)
      if (line) onLine(line)
      nl = buffered.indexOf('\n')
    }
  })
  process.stdin.on('error', () => {})
  if (f.pauseStdinMs) {
    process.stdin.pause()
    setTimeout(() => process.stdin.resume(), f.pauseStdinMs)
  }
}

// ------------------------------------------------------------------------------------------
// HTTP

function httpServer(rnd) {
  const base = plan.faults ?? {}
  const sessions = new Map() // id → { n: requests answered, expired: false | 404 | 400, faulty }
  let sessionSeq = 0
  let posts = 0
  const resumable = new Map() // event id → the answer event still owed
  const legacyStreams = new Map() // sid → res
  let legacySeq = 0
  let reverseSeq = 0
  const f0 = () => (faultyFor(sessionSeq + 1) ? base : {})

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy())
  })
  server.on('clientError', (_err, socket) => socket.destroy())
  // Idle keep-alive connections stay open on the server's side for as long as a case lasts, so
  // that a client which keeps its sockets after close() is seen (Node's default closes them at 5 s).
  server.keepAliveTimeout = 120000
  server.listen(0, '127.0.0.1', () => {
    process.stdout.on('error', () => {})
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
  })
  if (base.exitAfterMs) setTimeout(() => process.exit(0), base.exitAfterMs)

  const json = (res, status, body, headers = {}) => {
    if (res.destroyed) return
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body))
  }
  const sseHead = (res, headers = {}) =>
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers })
  const event = (obj, id) => `${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(obj)}\n\n`

  async function readBody(req) {
    // Decoded whole: a character whose bytes straddle two chunks stays one.
    const chunks = []
    let size = 0
    for await (const chunk of req) {
      chunks.push(chunk)
      size += chunk.length
      if (size > 8 << 20) break
    }
    return Buffer.concat(chunks).toString()
  }

  /** Writes `text` in pieces with pauses, or cuts the connection at `cutAt` bytes. */
  async function writeSlowly(res, text, { pauseMs = 0, cutAt = -1 } = {}) {
    const buf = Buffer.from(text)
    const end = cutAt >= 0 ? Math.min(cutAt, buf.length) : buf.length
    let at = 0
    while (at < end && !res.destroyed) {
      const step = pauseMs > 0 ? Math.max(1, Math.ceil(end / rnd.int(2, 5))) : end
      res.write(buf.subarray(at, Math.min(end, at + step)))
      at += step
      if (pauseMs > 0 && at < end) await sleep(rnd.int(0, pauseMs))
    }
    if (cutAt >= 0) {
      // Give the bytes a moment to leave, then break the connection (RST when unread data remains).
      await sleep(rnd.int(0, 20))
      res.socket?.resetAndDestroy?.() ?? res.destroy()
      return
    }
    res.end()
  }

  async function handle(req, res) {
    const url = new URL(req.url, 'http://x')
    if (url.pathname === '/messages') return legacyPost(req, res, url.searchParams.get('sid'))
    if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' })
    const sid = req.headers['mcp-session-id']
    const session = sid === undefined ? undefined : sessions.get(sid)
    const f = session ? session.faults : f0()
    if (req.method === 'GET') return getStream(req, res, f)
    if (req.method === 'DELETE') return deleteSession(req, res, sid, f)
    if (req.method !== 'POST') return json(res, 405, { error: 'method' })
    const raw = await readBody(req)
    let msg
    try {
      msg = JSON.parse(raw)
    } catch {
      return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
    }
    const n = posts++
    if (base.legacy) return json(res, 405, { error: 'Method Not Allowed' })
    if (f.burst5xx && n >= f.burst5xx.from && n < f.burst5xx.from + f.burst5xx.count) {
      const status = rnd.pick(f.burst5xx.statuses ?? [500, 502, 503])
      return json(res, status, rnd.pick(['', 'upstream died', '<html><body>502 Bad Gateway</body></html>', '{"error":"overloaded"}']), {
        'content-type': rnd.pick(['text/plain', 'text/html', 'application/json']),
        'retry-after': '0',
      })
    }
    if (f.dropP && rnd.chance(f.dropP)) return req.socket.destroy()
    if (sid !== undefined && session?.expired) {
      if (session.expired === 400)
        return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } })
      res.writeHead(404, { 'content-type': 'text/plain' })
      return res.end('Session not found')
    }
    if (sid !== undefined && !session && msg.method !== 'initialize') {
      res.writeHead(404, { 'content-type': 'text/plain' })
      return res.end('Session not found')
    }
    const isRequest = msg.method !== undefined && msg.id !== undefined && msg.id !== null
    if (!isRequest) {
      // A notification, or the answer to one of our requests.
      if (msg.method !== undefined && f.notifyFault && rnd.chance(0.5)) {
        if (f.notifyFault === 'hang') return
        if (f.notifyFault === 'reset') return req.socket.destroy()
        return json(res, 500, 'chaos notify failure', { 'content-type': 'text/plain' })
      }
      res.writeHead(202)
      return res.end()
    }
    if (f.stallP && rnd.chance(f.stallP)) return // never answered; the client's deadline decides
    if (f.trickleP && rnd.chance(f.trickleP)) {
      // Bytes keep coming, the answer never does: the deadline must fire anyway.
      sseHead(res)
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(': still thinking\n\n')), 50)
      res.on('close', () => clearInterval(timer))
      return
    }
    if (f.slowHeaders && rnd.chance(f.slowHeaders.p)) await sleep(rnd.int(0, f.slowHeaders.ms))
    if (msg.method === 'initialize' && f.initDelayMs) await sleep(f.initDelayMs)
    if (f.answerDelayMs) await sleep(rnd.int(0, f.answerDelayMs))
    if (res.destroyed) return
    const { result, error, headers, progress, notes } = compute(msg, f)
    if (session && msg.method !== 'initialize') {
      session.n++
      if (f.expire && session.n >= f.expire.after) session.expired = f.expire.how
    }
    const big = !error && msg.method === 'tools/call' && f.oversize && rnd.chance(f.oversize.p)
    const answer = error
      ? { jsonrpc: '2.0', id: msg.id, error }
      : { jsonrpc: '2.0', id: msg.id, result: big ? { content: [{ type: 'text', text: 'o'.repeat(f.oversize.bytes) }] } : result }
    if (f.garbageP && rnd.chance(f.garbageP)) return garbageReply(res, answer, f)
    const sse = f.sseP !== undefined ? rnd.chance(f.sseP) : rnd.chance(0.3)
    if (!sse) {
      const body = JSON.stringify(answer)
      if (f.slowBody && rnd.chance(f.slowBody.p)) {
        res.writeHead(200, { 'content-type': 'application/json', ...headers })
        return writeSlowly(res, body, { pauseMs: f.slowBody.pauseMs })
      }
      return json(res, 200, body, headers)
    }
    // SSE answer: notes and progress first, then the answer.
    sseHead(res, headers)
    let text = f.eventIds ? `retry: ${f.retryMs ?? 50}\n\n` : ''
    let seq = 0
    const eid = () => (f.eventIds ? `ev-${msg.id}-${++seq}` : undefined)
    for (let i = 0; i < notes; i++) text += event({ jsonrpc: '2.0', method: 'chaos/note', params: { i } }, eid())
    for (let i = 1; i <= progress.steps; i++)
      text += event({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: progress.token, progress: i } }, eid())
    if (f.reverseP && rnd.chance(f.reverseP))
      text += event({ jsonrpc: '2.0', id: `chaos-rev-${++reverseSeq}`, method: rnd.pick(['ping', 'roots/list', 'chaos/unknown']) }, eid())
    if (rnd.chance(0.3)) text += ': a comment\n\n'
    const last = eid()
    text += event(answer, last)
    if (f.resetSseP && rnd.chance(f.resetSseP)) {
      // Cut somewhere in the stream; with ids the client may resume after the last whole event.
      const cutAt = rnd.int(0, Buffer.byteLength(text) - 1)
      // Whichever event was the last whole one, a GET with its id gets the answer.
      if (f.eventIds) for (let k = 1; k < seq; k++) resumable.set(`ev-${msg.id}-${k}`, { answer, last })
      return writeSlowly(res, text, { cutAt, pauseMs: f.slowBody?.pauseMs ?? 0 })
    }
    return writeSlowly(res, text, { pauseMs: f.slowBody && rnd.chance(f.slowBody.p) ? f.slowBody.pauseMs : 0 })
  }

  function compute(msg, f) {
    const p = msg.params ?? {}
    const out = { result: undefined, error: undefined, headers: {}, progress: { steps: 0 }, notes: 0 }
    if (msg.method !== 'initialize' && f.rpcErrorP && rnd.chance(f.rpcErrorP)) {
      out.error = { code: rnd.pick([-32603, -32000, -1]), message: 'chaos refused' }
      return out
    }
    switch (msg.method) {
      case 'initialize': {
        if (f.initError) {
          out.error = { code: -32603, message: 'chaos initialize refused' }
          return out
        }
        const id = `chaos-sess-${++sessionSeq}`
        sessions.set(id, { n: 0, expired: false, faults: faultyFor(sessionSeq) ? base : {} })
        out.headers['mcp-session-id'] = id
        out.result = {
          protocolVersion: f.badVersion ? '1999-01-01' : (p.protocolVersion ?? '2025-03-26'),
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: 'chaos-http', version: String(sessionSeq) },
        }
        return out
      }
      case 'tools/list':
        out.result = { tools: TOOLS }
        return out
      case 'ping':
        out.result = {}
        return out
      case 'tools/call': {
        const a = p.arguments ?? {}
        const text = toolText(p)
        if (p.name === 'big') out.result = { content: [{ type: 'text', text: `${text}${'b'.repeat(Number(a.bytes ?? 1000))}` }] }
        else out.result = { content: [{ type: 'text', text }] }
        if (p.name === 'notify') out.notes = Number(a.count ?? 3)
        if (p.name === 'progress' && p._meta?.progressToken !== undefined)
          out.progress = { steps: Number(a.steps ?? 3), token: p._meta.progressToken }
        return out
      }
      default:
        out.error = { code: -32601, message: `Method not found: ${msg.method}` }
        return out
    }
  }

  function garbageReply(res, answer, f) {
    const kind = rnd.pick(
      f.garbageKinds?.length ? f.garbageKinds : ['nonjson', 'ssegarbage', 'wrongtype', 'empty', 'cutjson', 'ssenoanswer'],
    )
    switch (kind) {
      case 'nonjson':
        return json(res, 200, '<html>chaos</html>', { 'content-type': 'application/json' })
      case 'ssegarbage':
        sseHead(res)
        return res.end(`data: not json\n\n: x\ndata: {"jsonrpc":"2.0"\n\nevent: weird\ndata: 5\n\nretry: abc\n\n${event(answer)}`)
      case 'wrongtype':
        return json(res, 200, JSON.stringify(answer), { 'content-type': 'text/html' })
      case 'empty':
        res.writeHead(200, { 'content-type': rnd.pick(['application/json', 'text/event-stream']) })
        return res.end()
      case 'cutjson': {
        const body = JSON.stringify(answer)
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length + 50) })
        res.write(body.slice(0, Math.floor(body.length / 2)))
        return setTimeout(() => res.destroy(), rnd.int(0, 50))
      }
      default:
        sseHead(res)
        return res.end(
          event({ jsonrpc: '2.0', method: 'chaos/note', params: {} }) + event({ jsonrpc: '2.0', id: 'chaos-other', result: {} }),
        )
    }
  }

  function getStream(req, res, f) {
    if (base.legacy) return legacyStream(res)
    const lei = req.headers['last-event-id']
    if (lei !== undefined) {
      const owed = resumable.get(lei)
      const how = f.resume ?? 'answer'
      if (!owed || how === '404') return json(res, 404, { error: 'unknown event id' })
      if (how === 'hang') {
        sseHead(res)
        return res.write(': resumed, nothing more\n\n')
      }
      if (how === 'reset') return req.socket.destroy()
      resumable.delete(lei)
      sseHead(res)
      return res.end(event(owed.answer, owed.last))
    }
    switch (f.get ?? '405') {
      case 'hang':
        sseHead(res)
        return res.write(': open\n\n')
      case 'reset':
        sseHead(res)
        res.write(event({ jsonrpc: '2.0', method: 'chaos/pushed', params: {} }))
        return setTimeout(() => req.socket.destroy(), rnd.int(0, 200))
      case 'close':
        sseHead(res)
        return res.end('retry: 10\n\n')
      case 'garbage':
        sseHead(res)
        return res.end('data: {{{\n\ndata: 7\n\nid: \u0000\n\n: end\n\n')
      case 'notify': {
        sseHead(res)
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer)
          res.write(event({ jsonrpc: '2.0', method: 'chaos/pushed', params: { t: Date.now() } }))
          if (rnd.chance(0.3)) res.write(event({ jsonrpc: '2.0', id: `chaos-get-${++reverseSeq}`, method: 'ping' }))
          if (rnd.chance(0.05)) {
            clearInterval(timer)
            req.socket.destroy()
          }
        }, 50)
        res.on('close', () => clearInterval(timer))
        return
      }
      case '500':
        return json(res, 500, 'nope', { 'content-type': 'text/plain' })
      default:
        return json(res, 405, { error: 'Method Not Allowed' })
    }
  }

  function deleteSession(req, res, sid, f) {
    sessions.delete(sid)
    switch (f.delete ?? 'ok') {
      case 'hang':
        return
      case 'reset':
        return req.socket.destroy()
      case '500':
        return json(res, 500, 'chaos delete failure', { 'content-type': 'text/plain' })
      case '404':
        return json(res, 404, 'Session not found', { 'content-type': 'text/plain' })
      default:
        return json(res, 200, {})
    }
  }

  // --- legacy HTTP+SSE (2024-11-05) ---------------------------------------------------------

  function legacyStream(res) {
    const sid = String(++legacySeq)
    const lf = faultyFor(legacySeq) ? base : {}
    sseHead(res)
    const state = { res, sent: 0, faults: lf }
    legacyStreams.set(sid, state)
    res.on('close', () => legacyStreams.delete(sid))
    res.write(`event: endpoint\ndata: /messages?sid=${sid}\n\n`)
  }

  function legacySend(state, obj) {
    const { res, faults: lf } = state
    if (res.destroyed) return
    if (lf.legacy?.garbageP && rnd.chance(lf.legacy.garbageP))
      res.write(rnd.pick(['data: nope\n\n', 'event: message\ndata: {\n\n', ': hi\n\n']))
    const text = `event: message\ndata: ${JSON.stringify(obj)}\n\n`
    state.sent++
    if (lf.legacy?.resetAfter !== undefined && state.sent > lf.legacy.resetAfter) {
      res.write(text.slice(0, rnd.int(0, text.length - 1)))
      return setTimeout(() => res.destroy(), 5)
    }
    res.write(text)
  }

  async function legacyPost(req, res, sid) {
    const state = legacyStreams.get(sid)
    if (req.method !== 'POST' || !state) return json(res, 404, { error: 'unknown session' })
    const raw = await readBody(req)
    let msg
    try {
      msg = JSON.parse(raw)
    } catch {
      return json(res, 400, { error: 'bad json' })
    }
    const lf = state.faults
    if (lf.burst5xx && posts >= lf.burst5xx.from && posts < lf.burst5xx.from + lf.burst5xx.count) {
      posts++
      return json(res, 503, 'busy', { 'content-type': 'text/plain' })
    }
    posts++
    res.writeHead(202)
    res.end('Accepted')
    if (msg.id === undefined || msg.id === null || msg.method === undefined) return
    if (lf.stallP && rnd.chance(lf.stallP)) return
    if (lf.answerDelayMs) await sleep(rnd.int(0, lf.answerDelayMs))
    const { result, error } = compute(msg, lf)
    legacySend(state, error ? { jsonrpc: '2.0', id: msg.id, error } : { jsonrpc: '2.0', id: msg.id, result })
  }
}
