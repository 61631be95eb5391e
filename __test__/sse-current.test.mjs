// SPEC 11.3: at the root `type: "sse"` is the legacy HTTP+SSE transport itself (18.3.4
// `transports/sse.ts`): the event stream is opened first, no Streamable HTTP POST is tried. The
// 12.7 profile keeps its fallback (POST first, legacy when refused). Against the HTTP fixture's
// legacy endpoint on loopback; vitest (Node) and `bun test` (Bun).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native'
import { connectToServer, createTransport, disconnectServer } from 'mcp-native/client'
import { connectToServer as connect127 } from 'mcp-native/compat-12.7/client'
import { LegacySseConnectionTimeoutError, LegacySseTransport, createSseTransport } from 'mcp-native/transports/sse'
import { ROOT, startHttpFixture } from './helpers.mjs'

let server
let base
beforeAll(async () => {
  ;({ child: server, base } = await startHttpFixture())
})
afterAll(() => server.kill())
const stats = async () => (await fetch(`${base}/stats`)).json()
const open = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => (c.transport ? disconnectServer(c) : c.close())))
})

describe('type: "sse" at the root (18.3.4)', () => {
  it('connectToServer opens the legacy stream first (no POST tried); the 12.7 profile tries a POST first', async () => {
    const before = await stats()
    const c = await connectToServer('legacy', { type: 'sse', url: `${base}/sse` })
    open.push(c)
    expect(c.serverInfo.name).toBe('legacy-fixture')
    expect(await c.transport.request('echo', { over: 'legacy' })).toEqual({ over: 'legacy' })
    const after = await stats()
    expect(after.legacyOpened - before.legacyOpened).toBe(1)
    expect(after.legacyRefused - before.legacyRefused).toBe(0)
    const old = await connect127('old', { type: 'sse', url: `${base}/sse` })
    open.push(old)
    const last = await stats()
    expect(last.legacyOpened - after.legacyOpened).toBe(1)
    expect(last.legacyRefused - after.legacyRefused).toBe(1)
  })

  it('createSseTransport and createTransport give the legacy transport; its config stays as given', async () => {
    const config = { type: 'sse', url: `${base}/sse` }
    const t = await createSseTransport(config)
    open.push(t)
    expect(t).toBeInstanceOf(LegacySseTransport)
    expect(t.config).toBe(config)
    const init = await t.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } })
    expect(init.protocolVersion).toBe('2024-11-05')
    const u = await createTransport({ type: 'sse', url: `${base}/sse` })
    open.push(u)
    expect(u).toBeInstanceOf(LegacySseTransport)
    expect(new LegacySseConnectionTimeoutError(250).message).toBe('Legacy SSE endpoint timeout after 250ms')
    expect(new LegacySseConnectionTimeoutError(250).name).toBe('LegacySseConnectionTimeoutError')
  })

  it('a streamable server configured as sse is not reached at the root (18.3.4), as the agent', async () => {
    // The Streamable endpoint answers GET with 405: the legacy stream cannot open.
    const r = await connectToServer('wrong', { type: 'sse', url: `${base}/mcp`, timeout: 2000 }).then(
      () => 'connected',
      (e) => e,
    )
    expect(r).toBeInstanceOf(Error)
    expect(r.message).toMatch(/405/)
  })

  it('the root manager connects type sse servers through the legacy protocol', async () => {
    const m = new MCPManager(ROOT, null, { loadConfigs: async () => ({ configs: {}, sources: {} }) })
    try {
      const before = await stats()
      const r = await m.connectServers({ l: { type: 'sse', url: `${base}/sse` } }, {}, undefined, 0)
      expect(r.connectedServers).toEqual(['l'])
      expect(m.getTools().map((t) => t.name)).toEqual(['mcp__l_legacy_echo'])
      const after = await stats()
      expect(after.legacyRefused - before.legacyRefused).toBe(0)
      expect(after.legacyOpened - before.legacyOpened).toBe(1)
    } finally {
      await m.disconnectAll()
    }
  })
})
