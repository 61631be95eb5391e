// HttpTransport against real loopback HTTP servers: the project's fixture (http mode) and
// server-everything in streamableHttp mode. Runs under vitest (Node) and `bun test` (Bun) alike.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { HttpTransport, createHttpTransport } from 'mcp-native/compat-12.7'
import * as transports from 'mcp-native/compat-12.7/transports'
import { callMCP, parseSSE } from 'mcp-native/compat-12.7/json-rpc'
import { describeProgress } from './progress.mjs'
import { EventKind, eventKinds, longStringsValue, settle, startEverything, startHttpFixture, waitFor } from './helpers.mjs'

let server
let base
beforeAll(async () => {
  ;({ child: server, base } = await startHttpFixture())
})
afterAll(() => server.kill())

const open = []
async function connect(extra = {}) {
  const t = await createHttpTransport({ type: 'http', url: `${base}/mcp`, ...extra })
  open.push(t)
  return t
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()))
})
const stats = async () => (await fetch(`${base}/stats`)).json()
const initialize = (t) =>
  t.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } })

describe('HttpTransport basics', () => {
  it('is exported from the root and mcp-native/transports; connect does no I/O', async () => {
    // Identity across import paths is checked in a plain runtime by the stdio file's exports test.
    expect(typeof transports.HttpTransport).toBe('function')
    expect(typeof transports.createHttpTransport).toBe('function')
    const config = { type: 'http', url: 'http://127.0.0.1:9/never' }
    const t = new HttpTransport(config)
    expect(t.config).toBe(config)
    expect(t.url).toBe(config.url)
    await expect(t.request('echo')).rejects.toThrow(/^Transport not connected$/)
    await expect(t.notify('x')).rejects.toThrow(/^Transport not connected$/)
    await t.connect() // nothing listens on port 9: connect must not have tried
    expect(t.connected).toBe(true)
    await t.close()
  })

  it('round-trips JSON replies, keeps the session id, and sends the header rules', async () => {
    const t = await connect({
      headers: { Authorization: 'Bearer abc', Accept: 'application/json, text/event-stream, */*', 'Mcp-Session-Id': 'configured' },
    })
    const first = await t.request('headers')
    expect(first.authorization).toBe('Bearer abc')
    expect(first.accept).toBe('application/json, text/event-stream, */*')
    expect(first['content-type']).toBe('application/json')
    expect(first['mcp-session-id']).toBe('configured')
    expect(first['mcp-protocol-version']).toBeUndefined()
    const init = await initialize(t)
    expect(init.serverInfo.name).toBe('mcp-native-http-fixture')
    expect(t.sessionId).toMatch(/^sess-\d+$/)
    expect(t.protocolVersion).toBe('2025-06-18')
    const after = await t.request('headers')
    expect(after['mcp-session-id']).toBe(t.sessionId) // the server's id overrides the configured one
    expect(after['mcp-protocol-version']).toBe('2025-06-18')
    expect(await t.request('echo', { a: [1, { b: 'c' }] })).toEqual({ a: [1, { b: 'c' }] })
    // A large initialize answer is read in Rust (never handed over unread): its version counts.
    const t2 = await connect()
    const kinds = eventKinds(t2)
    const init2 = await t2.request('initialize', {
      protocolVersion: '2025-03-26',
      capabilities: {},
      clientInfo: { name: 'test', version: '1' },
      pad: 100 * 1024,
    })
    expect(init2.pad.length).toBe(100 * 1024)
    expect(kinds).toEqual([EventKind.RawAnswer]) // (then its result crosses as any large one does, {"result":…})
    expect((await t2.request('headers'))['mcp-protocol-version']).toBe('2025-03-26')
  })

  it('SSE replies: notifications first, in order, then the answer; several values in one event', async () => {
    const t = await connect()
    const seen = []
    t.onNotification = (method, params) => seen.push(`${method} ${JSON.stringify(params)}`)
    const r = await t.request('sse-echo', { notes: 3 }).then((v) => {
      seen.push('answer')
      return v
    })
    expect(r).toEqual({ echoed: { notes: 3 } })
    expect(seen).toEqual(['fixture/note {"i":0}', 'fixture/note {"i":1}', 'fixture/note {"i":2}', 'answer'])
    seen.length = 0
    expect(await t.request('sse-multi')).toEqual({ multi: true })
    expect(seen).toEqual(['fixture/note {"i":0}'])
  })

  it('answers server→client requests inside an SSE reply by POST', async () => {
    const t = await connect()
    expect((await t.request('sse-reverse', { method: 'ping' })).answer.result).toEqual({})
    expect((await t.request('sse-reverse', { method: 'roots/list' })).answer.error).toEqual({ code: -32601, message: 'Method not found' })
    t.onRequest = async (method) => ({ roots: [{ uri: 'file:///x', name: method }] })
    expect((await t.request('sse-reverse', { method: 'roots/list' })).answer.result).toEqual({
      roots: [{ uri: 'file:///x', name: 'roots/list' }],
    })
  })

  // A result of 64 KiB or more crosses as stdio's large answers do (src/sink.rs): unparsed,
  // its long strings cut out on the I/O thread, put back into the parse of the rest in JS.
  it('large results (JSON body or SSE event) come back as JSON.parse of the whole gives them', async () => {
    const t = await connect()
    const kinds = eventKinds(t)
    const KIB = 1024
    const value = longStringsValue()
    const got = await t.request('echo', value)
    expect(got).toEqual(value)
    expect(Object.hasOwn(got, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype)
    expect(kinds.splice(0)).toEqual([EventKind.RawAnswer])
    const x = 'x'.repeat(40 * KIB)
    for (const sse of [false, true]) {
      for (const text of [
        `{"t":"${x}","t":"later","p":"${x}"}`,
        `{"t":{"u":"${x}"},"t":[1],"p":"${x}"}`,
        `{"t":"${x}","t":"\\u0000${'0'.repeat(16)}:0","p":"${x}"}`,
        `{"t":"${x}\\u00e9\\u00FF\\b\\f\\r\\/","u":"${x}\\u2603\\ud83d\\ude00"}`,
        ` [ "${x}" , { "a" : "${x}" } ] `,
      ]) {
        expect(await t.request('raw-result', { text, sse })).toEqual(JSON.parse(text))
        expect(kinds.splice(0)).toEqual([EventKind.RawAnswer])
      }
      // Small answers are parsed with their batch, as before; the line is at 64 KiB of message
      // (a JSON body, an SSE event's data), as over stdio.
      expect(await t.request('raw-result', { text: '{"small":true}', sse })).toEqual({ small: true })
      expect(kinds.splice(0)).toEqual([EventKind.Result])
      for (const [bytes, kind] of [
        [64 * KIB - 1, EventKind.Result],
        [64 * KIB, EventKind.RawAnswer],
      ]) {
        expect(await t.request('raw-sized', { bytes, sse })).toMatch(/^y+$/)
        expect(kinds.splice(0)).toEqual([kind])
      }
      // The server's whole message crosses (not a copy of its result): its other members, in any
      // order, duplicated, non-ASCII, across lines, are read as JSON.parse reads them.
      const big = { big: x, wide: `${x}☃`, short: 'é ☃ 😀' }
      // (`many`: no long string to cut out, the message crosses whole, as UTF-8.)
      const many = { items: Array.from({ length: 6000 }, (_, i) => `é ☃ 😀 ${i}`) }
      for (const [text, value] of [
        [`{"result":1,"jsonrpc":"2.0","note":"café ☃","id":$ID,"error":null,"result":${JSON.stringify(big)}}`, big],
        [`\n {"result":1,"jsonrpc":"2.0","note":"café ☃","id":$ID,"result":${JSON.stringify(big)}} \n`, big],
        [`{"jsonrpc":"2.0",\n"id":$ID,\n"result":\n${JSON.stringify(big)}\n,"error":false}`, big],
        [`{"jsonrpc":"2.0","id":$ID,"result":${JSON.stringify(many)}}`, many],
      ]) {
        expect(await t.request('raw-message', { text, sse })).toEqual(value)
        expect(kinds.splice(0)).toEqual([EventKind.RawAnswer])
      }
      const refused = await settle(
        t.request('raw-message', { text: `{"id":$ID,"result":${JSON.stringify(big)},"error":{"code":7,"message":"no"}}`, sse }),
      )
      expect(refused.error.message).toBe('MCP error 7: no')
      expect(kinds.splice(0)).toEqual([EventKind.Failed])
      // A large message that is not JSON fails its request, and the connection goes on. One that
      // the skim reads as an answer is found by JSON.parse in JS (as a large stdio answer is);
      // one it cannot tell about, by the check in Rust (an SSE event that is not JSON is then
      // skipped, as a stdio line is: no answer comes).
      const inJs = /^Invalid JSON in the answer: /
      const inRust = sse ? /^No response received/ : /^Invalid JSON response: /
      for (const [text, message] of [
        [`{"jsonrpc":"2.0","id":$ID,"result":{"a":"${x}${x}","b":tru}}`, inJs],
        [`{"jsonrpc":"2.0","id":$ID,"result":{"a":"${x}${x}\\u00"}}`, inJs],
        [`{"jsonrpc":"2.0","id":$ID,"result":${JSON.stringify(big)},}`, inRust],
        [`{"jsonrpc":"2.0","id":$ID,"error":null,"result":{"a":"${x}${x}",}}`, inRust],
      ]) {
        const bad = await settle(t.request('raw-message', { text, sse }))
        expect(bad.error.message).toMatch(message)
        expect(bad.error.code).toBe(message === inRust && sse ? 'MCP_NO_RESPONSE' : 'MCP_PARSE_ERROR')
        kinds.splice(0)
      }
      expect(await t.request('echo', { still: 'fine' })).toEqual({ still: 'fine' })
      kinds.splice(0)
      // An SSE answer to another request is not this one's (a JSON body's id is not checked).
      const foreign = `{"jsonrpc":"2.0","id":"10123456789","result":${JSON.stringify(big)}}`
      if (sse) expect((await settle(t.request('raw-message', { text: foreign, sse }))).error.code).toBe('MCP_NO_RESPONSE')
      else expect(await t.request('raw-message', { text: foreign, sse })).toEqual(big)
      kinds.splice(0)
      // Bytes that are not UTF-8, and a byte-order mark before a JSON body, read as fetch's
      // json() reads them (U+FFFD; dropped), small or large.
      for (const pad of [0, 100 * KIB]) {
        const value = await t.request('raw-bytes', { sse, pad })
        expect(value.text).toBe('a\ufffdb')
        expect(value.pad.length).toBe(pad)
      }
      kinds.splice(0)
    }
    // Several JSON values in one SSE event: a notification, then the large answer.
    const notes = []
    t.onNotification = (method, params) => notes.push([method, params])
    const text = `{"jsonrpc":"2.0","method":"fixture/note","params":{"i":1}}\n{"jsonrpc":"2.0","id":$ID,"result":${JSON.stringify({ big: x + x })}}`
    expect(await t.request('raw-message', { text, sse: true })).toEqual({ big: x + x })
    expect(notes).toEqual([['fixture/note', { i: 1 }]])
    expect(kinds.splice(0)).toEqual([EventKind.Notification, EventKind.RawAnswer])
  })
})

describe('MCPManager over HTTP', () => {
  it('large tool results (JSON body or SSE event) take the large-answer route through the manager too', async () => {
    const { MCPManager, callTool } = await import('mcp-native/compat-12.7')
    const m = new MCPManager(process.cwd())
    try {
      await m.connectServers({ h: { type: 'http', url: `${base}/mcp` } }, {})
      const conn = m.getConnection('h')
      // (The manager hands each server's events to its client's transport face, lib/manager.js.)
      const kinds = eventKinds([...m._faces.values()][0]._face)
      // 300 KiB of text with characters from every range, and a short non-ASCII string beside it.
      const message = `${'x'.repeat(100 * 1024)}é${'y'.repeat(100 * 1024)}☃${'z'.repeat(100 * 1024)}😀`
      for (const name of ['echo', 'echo-sse']) {
        const tool = m.getTools().find((x) => x.name === `mcp_h_${name.replace('-', '_')}`)
        const out = await tool.execute('call-1', { message })
        expect(out.content[0].text).toBe(message)
        expect((await callTool(conn, name, { message })).content).toEqual([{ type: 'text', text: message }])
        expect(kinds.splice(0)).toEqual([EventKind.RawAnswer, EventKind.RawAnswer])
      }
    } finally {
      await m.disconnectAll()
    }
  })
})

describe('HttpTransport errors', () => {
  it('has the exact messages', async () => {
    const t = await connect()
    const e500 = (await settle(t.request('http-error', { status: 500 }))).error
    expect(e500.message).toBe('HTTP 500: ')
    expect(e500.status).toBe(500)
    expect(e500.code).toBe('MCP_HTTP_ERROR')
    await expect(
      t.request('http-error', { status: 401, body: 'no', wwwAuthenticate: 'Bearer realm="x"', authServer: 'https://auth' }),
    ).rejects.toThrow(/^HTTP 401: no \[WWW-Authenticate: Bearer realm="x"; Mcp-Auth-Server: https:\/\/auth\]$/)
    await expect(t.request('http-error', { status: 403, body: 'forbidden', authServer: 'https://a' })).rejects.toThrow(
      /^HTTP 403: forbidden \[Mcp-Auth-Server: https:\/\/a\]$/,
    )
    await expect(t.request('error', { code: -32602, message: 'Invalid params' })).rejects.toThrow(/^MCP error -32602: Invalid params$/)
    await expect(t.request('not-json')).rejects.toThrow(/JSON/)
    const noAnswer = settle(t.request('sse-no-answer'))
    // The id as the server saw it (a number: requestIdFormat's default).
    expect((await noAnswer).error.message).toMatch(/^No response received for request ID [1-9]\d{0,9}$/)
    const strings = await connect({ requestIdFormat: 'string' })
    await initialize(strings)
    // requestIdFormat "string": the decimal string of 10^10 plus the number.
    expect((await settle(strings.request('sse-no-answer'))).error.message).toMatch(/^No response received for request ID [1-9]\d{10,}$/)
    await expect(t.request('sse-cut')).rejects.toThrow(/^SSE stream ended unexpectedly$/)
    expect(t.connected).toBe(true)
    expect(await t.request('echo', { still: 'fine' })).toEqual({ still: 'fine' })
  })

  it('requests of one tick with one aborted between them: each of the others is answered as itself, under its own id', async () => {
    const t = await connect()
    // One tick's requests go to Rust as one batch, where an id that follows the line before's
    // is not written out (src/convert.rs request_line): the aborted one leaves a gap.
    const ac = new AbortController()
    const text = JSON.stringify({ jsonrpc: '2.0', id: '$ID', result: { id: '$ID' } }).replaceAll('"$ID"', '$ID')
    const calls = ['g1', 'g2', 'g3', 'g4', 'g5'].map((marker) =>
      t.request(
        'raw-message',
        { text: text.replace('"result":{', `"result":{"marker":"${marker}",`) },
        marker === 'g3' ? { signal: ac.signal } : undefined,
      ),
    )
    ac.abort()
    const results = await Promise.all(calls.map((c) => settle(c)))
    expect(results.map((r) => r.value?.marker ?? r.error?.name)).toEqual(['g1', 'g2', 'AbortError', 'g4', 'g5'])
    const ids = results.filter((r) => r.value).map((r) => Number(r.value.id))
    expect(ids.map((id) => id - ids[0])).toEqual([0, 1, 3, 4])
  })

  it('a broken SSE reply with event ids is resumed with GET + Last-Event-ID (bounded)', async () => {
    const t = await connect()
    const notes = []
    t.onNotification = (method, params) => notes.push({ method, params })
    const before = (await stats()).gets.length
    expect(await t.request('sse-drop')).toEqual({ resumed: true })
    const gets = (await stats()).gets.slice(before)
    expect(gets.length).toBe(1)
    expect(gets[0].lastEventId).toMatch(/^r1-/)
    expect(gets[0].accept).toBe('text/event-stream')
    expect(notes.map((n) => n.method)).toEqual(['fixture/before-drop', 'fixture/resumed'])
    const before2 = (await stats()).gets.length
    const started = Date.now()
    await expect(t.request('sse-drop-forever')).rejects.toThrow(/^No response received for request ID [1-9]\d*$/)
    expect((await stats()).gets.length - before2).toBe(3)
    expect(Date.now() - started).toBeGreaterThanOrEqual(80) // waited the server's retry: 30 each time
  })

  it('No response body, and answers over maxMessageBytes (SSE event or JSON body) fail just their request', async () => {
    const t = await connect({ maxMessageBytes: 64 * 1024 })
    await expect(t.request('sse-204')).rejects.toThrow(/^No response body$/)
    await expect(t.request('sse-big', { bytes: 1 << 20 })).rejects.toThrow(/^Message exceeds maxMessageBytes \(65536 bytes\)$/)
    await expect(t.request('json-big', { bytes: 1 << 20 })).rejects.toThrow(/^Message exceeds maxMessageBytes \(65536 bytes\)$/)
    expect((await t.request('sse-big', { bytes: 1000 })).data.length).toBe(1000)
    expect(await t.request('echo', { fine: true })).toEqual({ fine: true })
  })

  it('deadlines cover the whole exchange and fire on their own', async () => {
    const t = await connect({ timeout: 150 })
    // The server (a process of its own) would answer after 60 s, twice this test's timeout: each
    // rejection comes from the deadline, not from the server's answer or its connection ending.
    await expect(t.request('slow-headers', { ms: 60000 })).rejects.toThrow(/^Request timeout after 150ms$/)
    await expect(t.request('slow-body', { ms: 60000 })).rejects.toThrow(/^Request timeout after 150ms$/)
    await expect(t.request('sse-hang')).rejects.toThrow(/^SSE response timeout after 150ms$/)
    await expect(t.notify('slow/notify')).rejects.toThrow(/^Notify timeout after 150ms$/)
    await expect(t.request('echo', {}, { timeout: 0 })).rejects.toThrow(/^Request timeout after 0ms$/)
    const cancelled = await waitFor(async () => {
      const { received } = await t.request('received', {}, { timeout: 5000 })
      const c = received.filter((n) => n.method === 'notifications/cancelled')
      return c.length >= 3 && c
    })
    expect(cancelled.map((n) => n.params.reason)).toEqual([
      'Request timeout after 150ms',
      'Request timeout after 150ms',
      'SSE response timeout after 150ms',
    ])
  })

  it('abort rejects at once with signal.reason, closes the stream, and tells the server', async () => {
    const t = await connect()
    const ac = new AbortController()
    const open = (await stats()).openHangs
    const p = t.request('sse-hang', {}, { signal: ac.signal })
    // The request is in: the server holds its reply open.
    expect(await waitFor(async () => (await stats()).openHangs > open)).toBe(true)
    ac.abort()
    // At once: settled before the event loop's next turn (no timer, no I/O needed).
    const settled = await Promise.race([
      p.then(
        () => 'resolved',
        (e) => e,
      ),
      new Promise((r) => setImmediate(() => r('not yet'))),
    ])
    expect(settled).toBe(ac.signal.reason)
    // And the server's end of that reply closes (the stream was dropped).
    expect(await waitFor(async () => (await stats()).openHangs === open)).toBe(true)
    expect(await waitFor(async () => (await t.request('received')).received.some((n) => n.method === 'notifications/cancelled'))).toBe(true)
    const pre = new AbortController()
    pre.abort('early')
    await expect(t.request('echo', {}, { signal: pre.signal })).rejects.toBe('early')
  })

  it('rejects header values with CR or LF before sending anything', async () => {
    const t = await connect({ headers: { 'X-Evil': 'a\r\nInjected: 1' } })
    await expect(t.request('echo')).rejects.toThrow(/CR or LF/)
    await expect(t.notify('fixture/never')).rejects.toThrow(/CR or LF/)
    const { received } = await (await connect()).request('received')
    expect(received.some((n) => n.method === 'fixture/never')).toBe(false)
  })

  it('notify: any 2xx is success, others are HTTP errors', async () => {
    const t = await connect()
    await t.notify('fixture/hello', { x: 1 })
    await expect(t.notify('fail/notify')).rejects.toThrow(/^HTTP 500: /)
    const { received } = await t.request('received')
    expect(received.find((n) => n.method === 'fixture/hello').params).toEqual({ x: 1 })
  })
})

describe('HttpTransport sessions and lifecycle', () => {
  it('a 404 to a request with a session id clears the session (also 400 naming the session)', async () => {
    for (const how of ['expire-session', 'expire-session-400']) {
      const t = await connect()
      await initialize(t)
      const sid = t.sessionId
      expect(sid).toBeDefined()
      await t.request(how)
      const { error } = await settle(t.request('echo'))
      expect(error.code).toBe('MCP_SESSION_EXPIRED')
      expect(error.message).toMatch(how === 'expire-session' ? /^HTTP 404: Session not found$/ : /^HTTP 400: .*session/i)
      expect(t.sessionId).toBeUndefined()
      expect(await t.request('echo', { without: 'session' })).toEqual({ without: 'session' })
    }
  })

  it('close sends DELETE with the session id, rejects pending requests, calls onClose once', async () => {
    const t = await connect()
    await initialize(t)
    const sid = t.sessionId
    let closes = 0
    t.onClose = () => closes++
    const pending = settle(t.request('sse-hang'))
    await t.close()
    expect((await pending).error.message).toBe('Transport closed')
    expect(closes).toBe(1)
    await t.close()
    expect(closes).toBe(1)
    expect((await stats()).deleted).toContain(sid)
    await t.connect()
    expect(t.sessionId).toBeUndefined()
    expect(await t.request('echo', { again: 1 })).toEqual({ again: 1 })
  })

  it('2,000 requests at 32 in flight reuse a few kept-alive connections', async () => {
    const t = await connect()
    const before = (await stats()).connections
    let next = 0
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 2000) {
          const i = next++
          expect(await t.request('echo', { i })).toEqual({ i })
        }
      }),
    )
    const opened = (await stats()).connections - before
    expect(opened).toBeLessThanOrEqual(40)
    // Nothing per request is left behind: no timers, immediates or handles pile up.
    await new Promise((r) => setImmediate(r))
    const kinds = process.getActiveResourcesInfo().filter((k) => k === 'Timeout' || k === 'Immediate')
    expect(kinds.length).toBeLessThan(5)
  })

  it('SSE replies too: 1,000 at 32 in flight reuse a few kept-alive connections', async () => {
    // The answer ends the read; the stream's end, just behind it, keeps the connection.
    const t = await connect()
    const before = (await stats()).connections
    let next = 0
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 1000) {
          const i = next++
          expect(await t.request('sse-echo', { i, notes: 0 })).toEqual({ echoed: { i, notes: 0 } })
        }
      }),
    )
    const opened = (await stats()).connections - before
    expect(opened).toBeLessThanOrEqual(40)
  })
})

describe('redirects', () => {
  it('a POST is followed within the origin (with its headers), never to another one', async () => {
    const { createServer } = await import('node:http')
    const listen = (handler) =>
      new Promise((resolve) => {
        const srv = createServer(handler)
        srv.listen(0, '127.0.0.1', () => resolve(srv))
      })
    const seen = []
    const elsewhere = { hits: 0 }
    const other = await listen((_req, res) => {
      elsewhere.hits++
      res.end('{}')
    })
    const srv = await listen((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        seen.push([req.url, req.headers['x-api-key'], body.length > 0])
        if (req.url === '/moved') return res.writeHead(307, { location: '/here' }).end()
        if (req.url === '/away') {
          return res.writeHead(307, { location: `http://127.0.0.1:${other.address().port}/here` }).end()
        }
        const { id, params } = JSON.parse(body)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: params }))
      })
    })
    try {
      const url = (path) => `http://127.0.0.1:${srv.address().port}${path}`
      const moved = await connect({ url: url('/moved'), headers: { 'x-api-key': 'k' } })
      expect(await moved.request('echo', { a: 1 })).toEqual({ a: 1 })
      // Plain http: the lean client meets the redirect and it is followed from that answer
      // (reqwest from then on): each request reaches /moved once.
      expect(seen).toEqual([
        ['/moved', 'k', true],
        ['/here', 'k', true],
      ])
      expect(await moved.request('echo', { a: 2 })).toEqual({ a: 2 })
      expect(seen.slice(2)).toEqual([
        ['/moved', 'k', true],
        ['/here', 'k', true],
      ])
      const away = await connect({ url: url('/away'), headers: { 'x-api-key': 'k' } })
      await expect(away.request('echo', { a: 1 })).rejects.toThrow(/^HTTP 307: /)
      expect(elsewhere.hits).toBe(0)
    } finally {
      srv.closeAllConnections()
      other.closeAllConnections()
      srv.close()
      other.close()
    }
  })
})

describe('server-everything (sse, through the legacy fallback)', () => {
  it('handshake, tools/list, echo, long-running tool with progress', async () => {
    const { port, child } = await startEverything('sse')
    try {
      const t = await createHttpTransport({ type: 'sse', url: `http://127.0.0.1:${port}/sse` })
      open.push(t)
      const init = await t.request('initialize', {
        protocolVersion: '2024-11-05',
        capabilities: {},
        clientInfo: { name: 'mcp-native-test', version: '1.0.0' },
      })
      expect(init.serverInfo).toBeDefined()
      await t.notify('notifications/initialized')
      const { tools } = await t.request('tools/list')
      expect(tools.map((x) => x.name)).toContain('echo')
      const echo = await t.request('tools/call', { name: 'echo', arguments: { message: 'legacy sse' } })
      expect(echo.content[0].text).toContain('legacy sse')
      const progress = []
      const long = await t.request(
        'tools/call',
        { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } },
        { onProgress: (p) => progress.push(p.progress) },
      )
      expect(long.content[0].text).toContain('Long running operation completed')
      expect(progress).toEqual([1, 2])
      await t.close()
    } finally {
      child.kill()
    }
  })
})

describe('server-everything (streamableHttp)', () => {
  it('handshake, tools/list, echo, progress notifications, DELETE on close', async () => {
    const { port, child } = await startEverything('streamableHttp')
    try {
      const url = `http://127.0.0.1:${port}/mcp`
      const t = await createHttpTransport({ type: 'http', url })
      const notes = []
      t.onNotification = (method, params) => notes.push({ method, params })
      const init = await t.request('initialize', {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'mcp-native-test', version: '1.0.0' },
      })
      expect(init.serverInfo).toBeDefined()
      expect(t.sessionId).toBeDefined()
      await t.notify('notifications/initialized')
      const { tools } = await t.request('tools/list')
      expect(tools.map((x) => x.name)).toContain('echo')
      const echo = await t.request('tools/call', { name: 'echo', arguments: { message: 'over http' } })
      expect(echo.content[0].text).toContain('over http')
      const long = await t.request('tools/call', {
        name: 'trigger-long-running-operation',
        arguments: { duration: 1, steps: 2 },
        _meta: { progressToken: 'p-http' },
      })
      expect(long.content[0].text).toContain('Long running operation completed')
      expect(notes.filter((n) => n.method === 'notifications/progress').map((n) => n.params.progress)).toEqual([1, 2])
      const sid = t.sessionId
      await t.close()
      // The session is gone on the server: a request with it is refused.
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      })
      expect(res.status).toBeGreaterThanOrEqual(400)
    } finally {
      child.kill()
    }
  })
})

describe('type: "sse" legacy fallback', () => {
  it('falls back to HTTP+SSE when the first POST is refused; answers and notifications come on the stream', async () => {
    const t = await createHttpTransport({ type: 'sse', url: `${base}/sse` })
    open.push(t)
    const notes = []
    t.onNotification = (method, params) => notes.push({ method, params })
    const init = await initialize(t)
    expect(init.serverInfo.name).toBe('legacy-fixture')
    expect(t.protocolVersion).toBe('2024-11-05')
    await t.notify('notifications/initialized')
    expect(await t.request('echo', { over: 'legacy' })).toEqual({ over: 'legacy' })
    expect(notes.map((n) => n.method)).toEqual(['fixture/legacy-note'])
    // A large answer on the stream crosses as a large answer (event kind 14) there too.
    const kinds = eventKinds(t)
    const value = longStringsValue()
    expect(await t.request('echo', value)).toEqual(value)
    expect(kinds.filter((k) => k === EventKind.Result || k === EventKind.RawAnswer)).toEqual([EventKind.RawAnswer])
    await expect(t.request('nope')).rejects.toThrow(/^MCP error -32601: Method not found: nope$/)
  })

  it('the stream ending closes the transport as a server exit does: pending requests reject, onClose once, connect() starts again', async () => {
    const t = await createHttpTransport({ type: 'sse', url: `${base}/sse` })
    open.push(t)
    let closes = 0
    t.onClose = () => closes++
    await initialize(t)
    // Nothing can answer once the stream is gone: the transport must not stay "connected" and
    // send every later request to an endpoint the server has forgotten.
    await expect(t.request('end-stream')).rejects.toMatchObject({ code: 'MCP_TRANSPORT_CLOSED' })
    await waitFor(() => closes === 1, 3000)
    expect(t.connected).toBe(false)
    await expect(t.request('echo', { late: true })).rejects.toMatchObject({ code: 'MCP_NOT_CONNECTED' })
    expect(closes).toBe(1)
    await t.connect()
    await initialize(t)
    expect(await t.request('echo', { again: true })).toEqual({ again: true })
  })

  it('refuses an endpoint on another origin, and type "http" never falls back', async () => {
    const evil = await createHttpTransport({ type: 'sse', url: `${base}/evil-sse` })
    open.push(evil)
    await expect(initialize(evil)).rejects.toThrow(/another origin/)
    const plain = await createHttpTransport({ type: 'http', url: `${base}/sse` })
    open.push(plain)
    await expect(initialize(plain)).rejects.toThrow(/^HTTP 404: /)
  })
})

describe('startSSEListener', () => {
  afterEach(async () => {
    const t = await createHttpTransport({ type: 'http', url: `${base}/mcp` })
    await t.request('listener-mode', { mode: '405' })
    await t.close()
  })

  it('a 405 resolves at once; so does a second call while listening, and one when not connected', async () => {
    const t = await connect()
    const before = (await stats()).gets.length
    await expect(t.startSSEListener()).resolves.toBeUndefined()
    const once = (await stats()).gets.slice(before)
    // One GET, on the transport's session, refused with 405.
    expect(once.length).toBe(1)
    expect(once[0].session).toBe(t.sessionId ?? null)
    expect(once[0].accept).toBe('text/event-stream')
    await expect(t.startSSEListener()).resolves.toBeUndefined()
    expect(t.connected).toBe(true)
    expect(await t.request('echo', { still: 1 })).toEqual({ still: 1 })
    // Not connected: nothing is sent.
    const seen = (await stats()).gets.length
    await expect(new HttpTransport({ type: 'http', url: `${base}/mcp` }).startSSEListener()).resolves.toBeUndefined()
    expect((await stats()).gets.length).toBe(seen)
  })

  it('delivers server-initiated notifications and answers pings; close stops it', async () => {
    const t = await connect()
    await initialize(t)
    await t.request('listener-mode', { mode: 'stream' })
    const notes = []
    t.onNotification = (method, params) => notes.push({ method, params })
    let ended = false
    const listening = t.startSSEListener().then(() => (ended = true))
    await t.startSSEListener() // already listening: resolves at once
    await waitFor(async () => (await t.request('push', { hello: 1 })).streams === 1)
    await waitFor(() => notes.some((n) => n.method === 'fixture/pushed'))
    expect(notes.find((n) => n.method === 'fixture/pushed').params).toEqual({ hello: 1 })
    const get = (await stats()).gets.at(-1)
    expect(get.accept).toBe('text/event-stream')
    expect(get.session).toBe(t.sessionId)
    expect(ended).toBe(false)
    await t.close()
    await listening
    expect(ended).toBe(true)
  })

  it('reconnects with Last-Event-ID after a drop, and gives up on a server that keeps closing', async () => {
    const t = await connect()
    await t.request('listener-mode', { mode: 'once' })
    const before = (await stats()).gets.length
    await t.startSSEListener() // one event, drop, reconnect with Last-Event-ID, then 405
    const gets = (await stats()).gets.slice(before)
    expect(gets.map((g) => g.lastEventId)).toEqual([null, 'ev-1'])

    await t.request('listener-mode', { mode: 'close' })
    const before2 = (await stats()).gets.length
    await t.startSSEListener() // settles: it gave up
    expect((await stats()).gets.length - before2).toBe(5)
  })
})

describe('parseSSE (reference parity)', () => {
  it('matches every example of the contract', () => {
    expect(parseSSE('{"a":1}')).toEqual({ a: 1 })
    expect(parseSSE('data:{"a":1}')).toBeNull()
    expect(parseSSE('data: 0\ndata: {"b":2}')).toEqual({ b: 2 })
    expect(parseSSE('data: [DONE]')).toBeNull()
    expect(parseSSE('')).toBeNull()
    expect(parseSSE('data: null')).toBeNull()
    expect(parseSSE('data: {"first":1}\ndata: {"second":2}')).toEqual({ first: 1 })
    expect(parseSSE('event: message\ndata:  {"trimmed":true}  \r\n\n')).toEqual({ trimmed: true })
    expect(() => parseSSE('data: {not json')).toThrow(SyntaxError)
  })
})

describe('callMCP', () => {
  it('returns the whole envelope, errors included; SSE bodies go through parseSSE', async () => {
    const url = `${base}/mcp`
    const ok = await callMCP(url, 'echo', { x: 1 })
    expect(ok.jsonrpc).toBe('2.0')
    expect(typeof ok.id).toBe('string')
    expect(ok.result).toEqual({ x: 1 })
    const err = await callMCP(url, 'error', { code: -32000, message: 'bad' })
    expect(err.error).toEqual({ code: -32000, message: 'bad' })
    const sse = await callMCP(url, 'sse-echo', { notes: 0 })
    expect(sse.result).toEqual({ echoed: { notes: 0 } })
    const headers = await callMCP(url, 'headers', {}, { headers: { 'X-Extra': 'yes' } })
    expect(headers.result['x-extra']).toBe('yes')
    expect(headers.result.accept).toBe('application/json, text/event-stream')
  })

  it('has the exact failure messages, a timeout only when asked, and abort', async () => {
    const url = `${base}/mcp`
    await expect(callMCP(url, 'http-error', { status: 503 })).rejects.toThrow(/^MCP request failed: 503 Service Unavailable$/)
    await expect(callMCP(url, 'not-json')).rejects.toThrow(/^Failed to parse MCP response$/)
    await expect(callMCP(url, 'slow-headers', { ms: 2000 }, { timeout: 100 })).rejects.toThrow(/^Request timeout after 100ms$/)
    const ac = new AbortController()
    const p = callMCP(url, 'slow-headers', { ms: 2000 }, { signal: ac.signal })
    setTimeout(() => ac.abort(), 20)
    const { error } = await settle(p)
    expect(error).toBe(ac.signal.reason)
    expect(error.name).toBe('AbortError')
    expect((await callMCP(url, 'slow-headers', { ms: 50 })).result).toEqual({ slow: true })
  })
})

describeProgress({ connect: () => connect(), method: 'sse-progress', timeoutMessage: 'SSE response timeout after' })
