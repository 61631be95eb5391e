// The 2026-07-28 revision through the public API (SPEC 9): a strict modern server
// (fixture/modern-server.mjs) over HTTP and stdio, through MCPClient, the function API and
// MCPManager; era negotiation in both directions (a modern-first client and a legacy server, a
// legacy-first client and a modern server). Runs under vitest (Node) and `bun test` (Bun).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { callTool, connectToServer, disconnectServer, listTools, MCPClient, MCPManager } from 'mcp-native/compat-12.7'
import { EventKind, eventKinds, fixture, longStringsValue, NODE, ROOT, settle, startHttpFixture, waitFor } from './helpers.mjs'

const MODERN = join(ROOT, '__test__', 'fixture', 'modern-server.mjs')
const V = '2026-07-28'

async function startModern(flags = []) {
  const child = spawn(NODE, [MODERN, '--http', ...flags], { stdio: ['pipe', 'pipe', 'inherit'] })
  const { port } = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(JSON.parse(String(d)))))
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}

let modern
let legacy
beforeAll(async () => {
  modern = await startModern()
  legacy = await startHttpFixture()
})
afterAll(() => {
  modern.child.kill()
  legacy.child.kill()
})

const open = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => (c.disconnectAll ? c.disconnectAll() : c.close())))
})

const stdioModern = (flags = []) => ({ command: NODE, args: [MODERN, ...flags], killGraceMs: 200 })
const text = (result) => result.content[0].text
/** What the server got, but the `subscriptions/listen` the client keeps open beside. */
async function requests(client) {
  return (await client.request('requests')).requests.filter((r) => r.method !== 'subscriptions/listen')
}

for (const kind of ['http', 'stdio']) {
  describe(`a modern server over ${kind}`, () => {
    const config = () => (kind === 'http' ? { type: 'http', url: modern.url } : stdioModern())

    it('connects without initialize; every request carries _meta (and the modern headers over HTTP)', async () => {
      const client = new MCPClient('m', config(), { protocolVersion: V })
      open.push(client)
      const connection = await client.connect()
      expect(connection.serverInfo).toEqual({ name: 'modern-fixture', version: '1.0.0' })
      expect(client.protocolVersion).toBe(V)
      expect(client.instructions).toBe('A strict 2026-07-28 server.')
      const echoed = await client.callTool('echo', { a: 1 })
      expect(JSON.parse(text(echoed))).toEqual({ a: 1 })
      const seen = await requests(client)
      expect(seen.map((r) => r.method)).toEqual(['server/discover', 'tools/call'])
      for (const r of seen) {
        expect(r.params._meta['io.modelcontextprotocol/protocolVersion']).toBe(V)
        expect(r.params._meta['io.modelcontextprotocol/clientCapabilities']).toEqual({ roots: { listChanged: false } })
        expect(r.params._meta['io.modelcontextprotocol/clientInfo']).toEqual({ name: 'omp-coding-agent', version: '1.0.0' })
      }
      if (kind === 'http') {
        const call = seen[1].headers
        expect(call['mcp-protocol-version']).toBe(V)
        expect(call['mcp-method']).toBe('tools/call')
        expect(call['mcp-name']).toBe('echo')
        expect(call['mcp-session-id']).toBeUndefined()
      }
    })

    it('tools/list leaves out a tool with an invalid x-mcp-header (with a warning) over HTTP; tools/call mirrors the annotated arguments', async () => {
      const client = new MCPClient('m', config(), { protocolVersion: V })
      open.push(client)
      const warnings = []
      client.onWarning = (m) => warnings.push(m)
      await client.connect()
      const names = (await client.listTools()).map((t) => t.name)
      if (kind === 'http') {
        expect(names).toEqual(['echo', 'confirm', 'headers', 'slow'])
        expect(warnings).toEqual([
          'MCP tool "bad_tool" left out: x-mcp-header "Obj" is on a property that is not a string, integer or boolean',
        ])
        const got = JSON.parse(text(await client.callTool('headers', { region: 'eu west', priority: 7, note: 'x' })))
        expect(got).toEqual({
          'mcp-protocol-version': V,
          'mcp-method': 'tools/call',
          'mcp-name': 'headers',
          'mcp-param-region': 'eu west',
          'mcp-param-priority': '7',
        })
      } else {
        // stdio may ignore annotations: nothing to leave out.
        expect(names).toContain('bad_tool')
      }
    })

    it('an input_required round is answered by onRequest and the call re-sent with a new id and the same state', async () => {
      const client = new MCPClient('m', config(), { protocolVersion: V })
      open.push(client)
      const asked = []
      client.onRequest = async (method, params) => {
        asked.push([method, params.message])
        return { action: 'accept', content: { ok: true } }
      }
      await client.connect()
      const out = JSON.parse(text(await client.callTool('confirm', {})))
      expect(out).toEqual({ answer: { action: 'accept', content: { ok: true } }, state: 'state-1' })
      expect(asked).toEqual([['elicitation/create', 'Sure?']])
      // (The HTTP server is shared by the tests of this file: its own calls are the last two.)
      const calls = (await requests(client)).filter((r) => r.method === 'tools/call' && r.params.name === 'confirm').slice(-2)
      expect(calls).toHaveLength(2)
      expect(calls[0].id).not.toBe(calls[1].id)
      expect(calls[0].params.inputResponses).toBeUndefined()
      expect(calls[1].params.requestState).toBe('state-1')
    })

    it('without onRequest an elicitation fails the call, clearly; a handler that throws fails it with its message', async () => {
      const client = new MCPClient('m', config(), { protocolVersion: V })
      open.push(client)
      await client.connect()
      const none = await settle(client.callTool('confirm', {}))
      expect(none.error.message).toBe('MCP error: server asked for elicitation/create and no handler is set')
      client.onRequest = async () => {
        throw new Error('the user closed the dialog')
      }
      const threw = await settle(client.callTool('confirm', {}))
      expect(threw.error.message).toBe('the user closed the dialog')
      // The client still works.
      expect(JSON.parse(text(await client.callTool('echo', { b: 2 })))).toEqual({ b: 2 })
    })

    it('a forced -32022 on the first request is answered once with the version both speak', async () => {
      const cfg = kind === 'http' ? { type: 'http', url: (await startForced()).url } : stdioModern(['--force-version-retry'])
      const client = new MCPClient('m', cfg, { protocolVersion: V })
      open.push(client)
      await client.connect()
      const seen = await requests(client)
      expect(seen.map((r) => r.method)).toEqual(['server/discover', 'server/discover'])
      expect(seen[1].params._meta['io.modelcontextprotocol/protocolVersion']).toBe(V)
    })

    it('the function API and an abort work the same way', async () => {
      const connection = await connectToServer('m', config(), { protocolVersion: V })
      const tools = await listTools(connection)
      expect(tools.map((t) => t.name)).toContain('echo')
      expect(JSON.parse(text(await callTool(connection, 'echo', { c: 3 })))).toEqual({ c: 3 })
      const ctrl = new AbortController()
      const slow = settle(callTool(connection, 'slow', { ms: 5000 }, { signal: ctrl.signal }))
      setTimeout(() => ctrl.abort(), 50)
      expect((await slow).error?.name).toBe('AbortError')
      await disconnectServer(connection)
    })
  })
}

const forced = []
async function startForced() {
  const s = await startModern(['--force-version-retry'])
  forced.push(s.child)
  return s
}
afterAll(() => {
  for (const c of forced) c.kill()
})

describe('era negotiation', () => {
  it('a legacy-first client (the default) meets a modern HTTP server: initialize refused the modern way, probe, modern', async () => {
    const client = new MCPClient('m', { type: 'http', url: modern.url })
    open.push(client)
    await client.connect()
    expect(client.protocolVersion).toBe(V)
    expect(JSON.parse(text(await client.callTool('echo', { d: 4 })))).toEqual({ d: 4 })
  })

  it('a modern-first client meets legacy servers (HTTP fixture, stdio fixture): initialize after the probe', async () => {
    for (const cfg of [{ type: 'http', url: `${legacy.base}/mcp` }, fixture([], { killGraceMs: 200 })]) {
      const client = new MCPClient('l', cfg, { protocolVersion: V })
      open.push(client)
      await client.connect()
      expect(client.protocolVersion).toBe('2025-11-25')
      const result = await client.callTool('echo', { message: 'hi' })
      expect(JSON.stringify(result)).toContain('hi')
    }
  })

  // A modern-era call is a call of the Rust client; its large result crosses as a large answer of
  // the transports does (src/sink.rs): unparsed, its long strings cut out off the JS thread.
  it('a large result of a modern call (HTTP, stdio) comes back as JSON.parse of the whole gives it', async () => {
    const value = longStringsValue()
    for (const cfg of [{ type: 'http', url: modern.url }, stdioModern()]) {
      const client = new MCPClient('big', cfg, { protocolVersion: V })
      open.push(client)
      await client.connect()
      expect(client.protocolVersion).toBe(V)
      const kinds = eventKinds(client._face)
      expect(JSON.parse(text(await client.callTool('echo', value)))).toEqual(value)
      expect(JSON.parse(text(await client.callTool('echo', { small: true })))).toEqual({ small: true })
      expect(kinds.filter((k) => k === EventKind.Result || k === EventKind.RawAnswer)).toEqual([EventKind.RawAnswer, EventKind.Result])
    }
  })

  it("list_changed comes through subscriptions/listen: the manager refreshes a modern server's tools", async () => {
    const own = await startModern()
    forced.push(own.child)
    const m = new MCPManager(ROOT, null, { protocolVersion: V })
    open.push(m)
    await m.connectServers({ mh: { type: 'http', url: own.url }, ms: stdioModern() }, {})
    for (const name of ['mh', 'ms']) {
      const client = m.getConnection(name)
      // The listen request is open (it carries its filter and _meta).
      await waitFor(async () => (await client.transport.request('requests')).requests.some((r) => r.method === 'subscriptions/listen'))
      const listen = (await client.transport.request('requests')).requests.find((r) => r.method === 'subscriptions/listen')
      expect(listen.params.notifications).toEqual({ toolsListChanged: true })
      expect(listen.params._meta['io.modelcontextprotocol/protocolVersion']).toBe(V)
      expect((await client.transport.request('add-tool')).listeners).toBe(1)
      expect(await waitFor(() => m.getTools().some((t) => t.name === `mcp_${name}_added`), 5000)).toBe(true)
    }
  })

  it('MCPManager with protocolVersion and onRequest: modern tools run, their input rounds answered', async () => {
    const m = new MCPManager(ROOT, null, {
      protocolVersion: V,
      onRequest: async (serverName, method) => (method === 'elicitation/create' ? { action: 'accept', content: { from: serverName } } : {}),
    })
    open.push(m)
    const result = await m.connectServers({ mh: { type: 'http', url: modern.url }, ms: stdioModern() }, {})
    expect(result.connectedServers.sort()).toEqual(['mh', 'ms'])
    const confirm = m.getTools().find((t) => t.name === 'mcp_mh_confirm')
    const out = await confirm.execute('call-1', {})
    expect(JSON.parse(out.content[0].text).answer).toEqual({ action: 'accept', content: { from: 'mh' } })
    expect(m.getTools().map((t) => t.name)).not.toContain('mcp_mh_bad_tool')
  })
})
