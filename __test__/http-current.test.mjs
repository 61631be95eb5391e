// The root manager's Streamable HTTP rule (18.3.4, SPEC 11.5 18.2.1): a GET stream of server
// messages that is lost — ended with nothing to resume from, a resumption refused, the server gone —
// closes the connection's transport (`closeOnStreamLoss`, which the root manager sets), so that the
// reconnect policy notices a server that went away while idle. A GET answered with a 2xx that is not
// an event stream is no stream. The 12.7 profile, and a transport without the option, reconnect the
// stream quietly. Against the HTTP fixture on loopback; vitest (Node) and `bun test` (Bun).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native'
import { createTransport } from 'mcp-native/client'
import { createTransport as createTransport127 } from 'mcp-native/compat-12.7/client'

/** A root transport with the manager's rule. */
const withRule = (config) => createTransport({ ...config, closeOnStreamLoss: true })
import { NODE, ROOT, startHttpFixture, waitFor } from './helpers.mjs'

let server
let base
beforeAll(async () => {
  ;({ child: server, base } = await startHttpFixture())
})
afterAll(() => server.kill())
const open = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()))
})
const initialize = (t) =>
  t.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } })
const stats = async () => (await fetch(`${base}/stats`)).json()

async function listening(make, mode) {
  const t = await make({ type: 'http', url: `${base}/mcp` })
  open.push(t)
  await initialize(t)
  await t.request('listener-mode', { mode })
  let closes = 0
  t.onClose = () => closes++
  const errors = []
  t.onError = (e) => errors.push(e.message)
  return { t, closes: () => closes, errors }
}

describe('a lost GET stream (18.3.4)', () => {
  it('a stream that ends with nothing to resume from closes a transport with the rule; others reconnect quietly', async () => {
    const root = await listening(withRule, 'close')
    await root.t.startSSEListener()
    await waitFor(() => root.closes() === 1, 5000)
    expect(root.t.connected).toBe(false)
    expect(root.errors).toContain('SSE stream ended')
    const old = await listening(createTransport127, 'close')
    const before = (await stats()).gets.length
    await old.t.startSSEListener() // gives up after 5 streams without events
    expect((await stats()).gets.length - before).toBe(5)
    expect(old.t.connected).toBe(true)
    expect(old.closes()).toBe(0)
    // The root's function API keeps its connection (18.3.4's transport stays connected too).
    const plain = await listening(createTransport, 'close')
    const gets = (await stats()).gets.length
    await plain.t.startSSEListener()
    expect((await stats()).gets.length - gets).toBe(5)
    expect(plain.t.connected).toBe(true)
  })

  it('a GET answered with a 2xx that is not an event stream is no stream: nothing closes', async () => {
    const { createServer } = await import('node:http')
    const srv = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        const msg = JSON.parse(body || '{}')
        if (msg.id === undefined) return res.writeHead(202).end()
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: msg.id,
            result:
              msg.method === 'initialize'
                ? { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'x', version: '1' } }
                : { ok: true },
          }),
        )
      })
    })
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
    try {
      const t = await withRule({ type: 'http', url: `http://127.0.0.1:${srv.address().port}/mcp` })
      open.push(t)
      let closes = 0
      t.onClose = () => closes++
      await initialize(t)
      await t.startSSEListener()
      expect(await t.request('echo')).toEqual({ ok: true })
      expect(t.connected).toBe(true)
      expect(closes).toBe(0)
    } finally {
      srv.close()
    }
  })

  it('a refused resumption closes it too (one event with an id, then 405)', async () => {
    const root = await listening(withRule, 'once')
    await root.t.startSSEListener()
    await waitFor(() => root.closes() === 1, 5000)
    expect(root.t.connected).toBe(false)
    expect(root.errors).toContain('SSE listener resume refused')
  })

  it('18.2.1: an idle server holding the stream that goes away is noticed by the manager and retried on its schedule', async () => {
    const own = spawn(NODE, [join(ROOT, '__test__', 'fixture', 'http-server.mjs')], { stdio: ['pipe', 'pipe', 'ignore'] })
    const port = await new Promise((resolve) => own.stdout.once('data', (d) => resolve(JSON.parse(String(d)).port)))
    let again
    const m = new MCPManager(
      ROOT,
      null,
      { loadConfigs: async () => ({ configs: {}, sources: {} }) },
      { ladderMs: [100], retryBaseMs: 300, retryMaxMs: 600 },
    )
    try {
      const events = []
      m.addConnectionStatusListener((e) => events.push(e))
      const url = `http://127.0.0.1:${port}/mcp`
      await m.connectServers({ remote: { type: 'http', url } }, {}, undefined, 0)
      await m.getConnection('remote').transport.request('listener-mode', { mode: 'stream' })
      // A fresh connection opens its stream in the new mode; its events heard before counting.
      const mark = events.length
      await m.reconnectServer('remote', { manual: true })
      await waitFor(() => events.slice(mark).some((e) => e.type === 'connected'), 5000)
      await waitFor(async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()).openStreams === 1, 5000)
      events.length = 0
      own.kill('SIGKILL')
      await waitFor(() => events.some((e) => e.type === 'failed'), 10000)
      expect(events[0]).toEqual({ type: 'reconnecting', serverName: 'remote' })
      expect(m.getConnectionStatus('remote')).not.toBe('connected')
      again = spawn(NODE, [join(ROOT, '__test__', 'fixture', 'http-server.mjs'), `--port=${port}`], { stdio: ['pipe', 'pipe', 'ignore'] })
      await new Promise((resolve) => again.stdout.once('data', resolve))
      await waitFor(() => m.getConnectionStatus('remote') === 'connected', 10000)
      expect(events.at(-1)).toEqual({ type: 'connected', serverName: 'remote' })
      expect(m.getTools().length).toBeGreaterThan(0)
    } finally {
      await m.disconnectAll()
      own.kill('SIGKILL')
      again?.kill('SIGKILL')
    }
  })
})
