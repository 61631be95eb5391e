// The floor clients: what a plain program in each runtime does to talk MCP with no library, written
// the way a careful person would (no batching tricks, no shortcuts the package cannot take either:
// every answer is decoded and fully JSON-parsed, every request is its own JSON text).
//   stdio: spawn the server, one write per request; stdout kept as a list of chunks, the newline
//          searched in the new chunk only, one concat and one JSON.parse per line.
//          Node: child_process.spawn. Bun: Bun.spawn (FileSink write + flush, stream reader).
//   HTTP:  Node: node:http with a keep-alive Agent. Bun: fetch (keep-alive by default).
//          JSON replies: one concat, one JSON.parse; SSE replies: the `data:` lines of each event.
// Every client has the benches' face: callTool(name, args) → the result object, listTools(),
// close(), plus `pid` for stdio (the server's process).
import { spawn } from 'node:child_process'
import { Agent, request } from 'node:http'

const IS_BUN = !!process.versions.bun
const PROTOCOL = '2025-03-26'
const INIT = { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'floor', version: '1' } }

/** JSON-RPC bookkeeping shared by the stdio floors: ids, pending promises, settling a parsed line. */
class Pending {
  constructor() {
    this.map = new Map()
    this.nextId = 1
  }
  add(resolve, reject) {
    const id = this.nextId++
    this.map.set(id, { resolve, reject })
    return id
  }
  settle(msg) {
    const p = this.map.get(msg.id)
    if (!p) return
    this.map.delete(msg.id)
    if (msg.error) p.reject(new Error(msg.error.message))
    else p.resolve(msg.result)
  }
  failAll(err) {
    for (const p of this.map.values()) p.reject(err)
    this.map.clear()
  }
}

/**
 * Splits a byte stream into lines: `push(chunk)` for each chunk read, calls `onLine(text)` per
 * complete line. The partial line is a list of chunks; only the new chunk is searched for '\n';
 * a line spanning chunks is joined with one concat and decoded once.
 */
export function lineSplitter(onLine, decode) {
  let parts = []
  let partsLen = 0
  return (chunk) => {
    let start = 0
    let nl = chunk.indexOf(10)
    while (nl !== -1) {
      if (parts.length) {
        parts.push(chunk.subarray(start, nl))
        onLine(decode(Buffer.concat(parts, partsLen + nl - start)))
        parts = []
        partsLen = 0
      } else if (nl > start) onLine(decode(chunk.subarray(start, nl)))
      start = nl + 1
      nl = chunk.indexOf(10, start)
    }
    if (start < chunk.length) {
      const rest = start === 0 ? chunk : chunk.subarray(start)
      parts.push(rest)
      partsLen += rest.length
    }
  }
}

/**
 * The server's process on this runtime's own process I/O, as the floor and the ceiling use it.
 * Node: child_process.spawn, `stdin.write`. Bun: Bun.spawn, FileSink write + flush, a stream
 * reader. `onChunk(bytes)` gets each chunk of its stdout; `onEnd()` runs once it is gone (Node:
 * the process exited; Bun: its stdout ended). `close()` ends its stdin and waits for it to exit
 * (killed after 2 s).
 */
function serverProcess(command, args, onChunk, onEnd) {
  if (IS_BUN) {
    const proc = globalThis.Bun.spawn([command, ...args], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
    const reading = (async () => {
      const reader = proc.stdout.getReader()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        onChunk(value)
      }
      onEnd()
    })()
    return {
      pid: proc.pid,
      write: (data) => {
        proc.stdin.write(data)
        proc.stdin.flush()
      },
      close: () => {
        proc.stdin.end()
        const gone = proc.exited.then(() => reading)
        return goneWithin(gone, () => proc.kill(9))
      },
    }
  }
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  child.stdout.on('data', onChunk)
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.once('exit', onEnd)
  return {
    pid: child.pid,
    write: (data) => child.stdin.write(data),
    close: () => {
      child.stdin.end()
      return goneWithin(exited, () => child.kill('SIGKILL'))
    },
  }
}

/** Waits for `gone`, killing the server if it is not gone within 2 s. */
async function goneWithin(gone, kill) {
  const t = setTimeout(kill, 2000)
  await gone
  clearTimeout(t)
}

/** A minimal JSONL client: one write per request, every answer decoded and parsed (see the top). */
class StdioFloor {
  static async start(command, args) {
    const c = new StdioFloor()
    c.pending = new Pending()
    // Each runtime's usual decoding: Buffer's toString on Node, a TextDecoder on Bun.
    const decoder = IS_BUN ? new TextDecoder() : null
    const push = lineSplitter(
      (line) => c.pending.settle(JSON.parse(line)),
      decoder ? (bytes) => decoder.decode(bytes) : (bytes) => bytes.toString(),
    )
    c.server = serverProcess(command, args, push, () => c.pending.failAll(new Error('server exited')))
    c.pid = c.server.pid
    await c.request('initialize', INIT)
    c.server.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    return c
  }
  request(method, params) {
    return new Promise((resolve, reject) => {
      const id = this.pending.add(resolve, reject)
      this.server.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  }
  callTool(name, args) {
    return this.request('tools/call', { name, arguments: args })
  }
  async listTools() {
    return (await this.request('tools/list', {})).tools
  }
  close() {
    return this.server.close()
  }
}

/**
 * The ceiling: not a client a user could have, but a bound on what a client of its kind (an
 * event-loop client on this runtime's own process I/O: child_process / Bun.spawn, as the floor)
 * can reach against the same server; not a strict one (it meets the same wake-ups as everyone).
 * It does no work per call: its requests are bytes made once (an echo call, always id 1: the
 * server does the same work for any id), a tick's requests go out in one write, and an answer is
 * a newline counted, never decoded or parsed, settling the oldest waiting call. Its callTool
 * resolves with nothing. What it reaches, beside the floor and the SDK in the same rounds, says
 * which ratios the machine leaves room for (bench/run.mjs: the "ceiling" rows).
 */
class StdioCeiling {
  static async start(command, args) {
    const c = new StdioCeiling()
    c.waiting = []
    c.head = 0
    c.queued = 0
    const one = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'm0' } } })}\n`
    /** @type {Buffer[]} n requests at index n, made on first use */
    c.batches = []
    c.batch = (n) => (c.batches[n] ??= Buffer.from(one.repeat(n)))
    c.flush = () => {
      const n = c.queued
      c.queued = 0
      c.write(c.batch(n))
    }
    const onChunk = (chunk) => {
      let i = chunk.indexOf(10)
      while (i !== -1) {
        const w = c.waiting[c.head]
        c.waiting[c.head++] = undefined
        if (c.head === c.waiting.length) {
          c.waiting.length = 0
          c.head = 0
        }
        w?.()
        i = chunk.indexOf(10, i + 1)
      }
    }
    c.server = serverProcess(command, args, onChunk, () => {})
    c.pid = c.server.pid
    c.write = c.server.write
    // the handshake, as every client makes it (its answer is the first line counted)
    await new Promise((resolve) => {
      c.waiting.push(resolve)
      c.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT })}\n`)
    })
    c.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    return c
  }
  /** One echo call; resolves (with nothing) when an answer's newline arrives. */
  callTool() {
    return new Promise((resolve) => {
      this.waiting.push(resolve)
      if (this.queued++ === 0) queueMicrotask(this.flush)
    })
  }
  close() {
    return this.server.close()
  }
}

/** The JSON-RPC message answering `id` in a reply body of type `contentType`. */
function answerIn(contentType, text, id) {
  if (!contentType.includes('text/event-stream')) return JSON.parse(text)
  // SSE: events end with a blank line; an event's data is its `data:` lines joined by '\n'.
  let data = []
  let answer
  for (const line of text.split('\n')) {
    if (line === '' || line === '\r') {
      if (data.length) {
        const msg = JSON.parse(data.join('\n'))
        if (msg.id === id) answer = msg
        data = []
      }
    } else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5))
  }
  if (data.length) {
    const msg = JSON.parse(data.join('\n'))
    if (msg.id === id) answer = msg
  }
  if (!answer) throw new Error('no answer in the SSE reply')
  return answer
}

/** Streamable HTTP floor: the handshake, then one POST per request. `post` is runtime-specific. */
class HttpFloor {
  static async start(url) {
    const c = IS_BUN ? new FetchFloor(url) : new NodeHttpFloor(url)
    c.nextId = 1
    c.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const init = await c.rpc('initialize', INIT)
    c.headers['mcp-session-id'] = c.session
    c.headers['mcp-protocol-version'] = init.protocolVersion
    await c.post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    return c
  }
  async rpc(method, params) {
    const id = this.nextId++
    const { contentType, text } = await this.post(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
    const msg = answerIn(contentType, text, id)
    if (msg.error) throw new Error(msg.error.message)
    return msg.result
  }
  callTool(name, args) {
    return this.rpc('tools/call', { name, arguments: args })
  }
  async listTools() {
    return (await this.rpc('tools/list', {})).tools
  }
}

class NodeHttpFloor extends HttpFloor {
  constructor(url) {
    super()
    const u = new URL(url)
    this.target = { host: u.hostname, port: Number(u.port), path: u.pathname }
    this.agent = new Agent({ keepAlive: true })
  }
  post(body, method = 'POST') {
    return new Promise((resolve, reject) => {
      const req = request(
        { ...this.target, method, agent: this.agent, headers: { ...this.headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          if (res.headers['mcp-session-id']) this.session = res.headers['mcp-session-id']
          const parts = []
          res.on('data', (c) => parts.push(c))
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 300) return reject(new Error(`HTTP ${res.statusCode}`))
            resolve({ contentType: res.headers['content-type'] ?? '', text: Buffer.concat(parts).toString() })
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  }
  async close() {
    await this.post('', 'DELETE').catch(() => {})
    this.agent.destroy()
  }
}

class FetchFloor extends HttpFloor {
  constructor(url) {
    super()
    this.url = url
  }
  async post(body, method = 'POST') {
    const res = await fetch(this.url, { method, headers: this.headers, body: body || undefined })
    const session = res.headers.get('mcp-session-id')
    if (session) this.session = session
    const text = await res.text()
    if (res.status >= 300) throw new Error(`HTTP ${res.status}`)
    return { contentType: res.headers.get('content-type') ?? '', text }
  }
  async close() {
    await this.post('', 'DELETE').catch(() => {})
  }
}

/** The stdio floor of this runtime, connected (initialize + initialized done). */
export const startStdioFloor = (command, args) => StdioFloor.start(command, args)
/** The ceiling (see StdioCeiling): a bound on clients of its kind, not a client. */
export const startStdioCeiling = (command, args) => StdioCeiling.start(command, args)
/** The HTTP floor of this runtime, connected. */
export const startHttpFloor = (url) => HttpFloor.start(url)
