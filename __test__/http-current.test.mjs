// The root's Streamable HTTP rules (18.3.4, SPEC 11.3/11.5 18.2.1): a GET stream of server messages
// that is lost — ended with nothing to resume from, a resumption refused, the server gone — closes
// the transport, so that its owner (the manager's reconnect policy) notices a server that went away
// while idle. The 12.7 profile reconnects the stream quietly. Against the HTTP fixture on loopback;
// vitest (Node) and `bun test` (Bun).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native'
import { createTransport } from 'mcp-native/client'
import { createTransport as createTransport127 } from 'mcp-native/compat-12.7/client'
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
  it('a stream that ends with nothing to resume from closes the root transport; the 12.7 one reconnects quietly', async () => {
    const root = await listening(createTransport, 'close')
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
  })

  it('a refused resumption closes it too (one event with an id, then 405)', async () => {
    const root = await listening(createTransport, 'once')
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
      // A fresh connection opens its stream in the new mode.
      await m.reconnectServer('remote', { manual: true })
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
