// SPEC 11.3–11.5: the function API at the package root, as the agent ships it today (18.3.4
// `client.ts`): the protocol revision, the connect deadline (0 = none, OMP_MCP_TIMEOUT_MS,
// MCPConnectionTimeoutError), roots/list, resources, templates, subscriptions and prompts —
// against the fixture server and the real server-everything. vitest (Node) and `bun test` (Bun).
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

import {
  MCPConnectionTimeoutError,
  connectToServer,
  disconnectServer,
  getPrompt,
  listPrompts,
  listResourceTemplates,
  listResources,
  readResource,
  serverSupportsPrompts,
  serverSupportsResourceSubscriptions,
  serverSupportsResources,
  subscribeToResources,
  unsubscribeFromResources,
} from 'mcp-native/client'
import { connectToServer as connect127 } from 'mcp-native/compat-12.7/client'
import { NODE, fixture, marker, mcpPackage, processesWith, settle, waitFor } from './helpers.mjs'

const open = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => disconnectServer(c)))
})
async function connect(...args) {
  const c = await connectToServer(...args)
  open.push(c)
  return c
}
const requestsOf = async (c, method) => (await c.transport.request('requests')).requests.filter((r) => r.method === method)
const everything = () => ({ command: NODE, args: [mcpPackage('server-everything'), 'stdio'], timeout: 30000 })

describe('connectToServer (18.3.4)', () => {
  it('asks for protocol revision 2025-11-25 (the 12.7 profile: 2025-03-26); the connection keeps the config as given', async () => {
    const config = fixture([], { timeout: 0 })
    const c = await connect('v', config)
    expect((await requestsOf(c, 'initialize'))[0].params.protocolVersion).toBe('2025-11-25')
    expect(c.config).toBe(config)
    const old = await connect127('old', fixture())
    open.push(old)
    expect((await requestsOf(old, 'initialize'))[0].params.protocolVersion).toBe('2025-03-26')
  })

  it('request ids are JSON numbers (a server that reads no other, as xcrun mcpbridge, works); requestIdFormat "string" writes strings', async () => {
    // Both profiles: ids are a transport internal (SPEC 11.3).
    for (const connectWith of [connectToServer, connect127]) {
      const c = await connectWith('n', fixture(['--number-ids-only']))
      open.push(c)
      expect(await c.transport.request('echo', { a: 1 })).toEqual({ a: 1 })
      const ids = (await c.transport.request('requests')).requests.map((r) => r.id)
      expect(ids.every((id) => Number.isInteger(id) && id > 0 && id < 2 ** 31)).toBe(true)
    }
    const s = await connect('s', fixture([], { requestIdFormat: 'string' }))
    const ids = (await s.transport.request('requests')).requests.map((r) => r.id)
    expect(ids.length).toBeGreaterThan(1)
    for (const id of ids) expect(id).toMatch(/^[1-9]\d{10,}$/)
    // That server never answers a string id: the handshake times out.
    const refused = await settle(connectToServer('x', fixture(['--number-ids-only'], { requestIdFormat: 'string', timeout: 500 })))
    expect(refused.error.name).toBe('MCPConnectionTimeoutError')
  })

  it('timeout 0 is no deadline (12.7: fails at once); a slow handshake is an MCPConnectionTimeoutError; OMP_MCP_TIMEOUT_MS wins', async () => {
    const slow = await connect('slow', fixture(['--init-delay-ms=300'], { timeout: 0 }))
    expect(slow.serverInfo.name).toBe('mcp-native-fixture')
    const old = await settle(connect127('old', fixture(['--init-delay-ms=300'], { timeout: 0 })))
    expect(old.error?.message).toBe('Connection to MCP server "old" timed out after 0ms')
    const hung = await settle(connectToServer('h', fixture(['--init-hang'], { timeout: 200 })))
    expect(hung.error).toBeInstanceOf(MCPConnectionTimeoutError)
    expect(hung.error).toMatchObject({
      name: 'MCPConnectionTimeoutError',
      message: 'Connection to MCP server "h" timed out after 200ms',
      serverName: 'h',
      timeoutMs: 200,
      code: 'MCP_TIMEOUT',
    })
    const saved = process.env.OMP_MCP_TIMEOUT_MS
    process.env.OMP_MCP_TIMEOUT_MS = '150'
    try {
      const env = await settle(connectToServer('e', fixture(['--init-hang'], { timeout: 60000 })))
      expect(env.error?.message).toBe('Connection to MCP server "e" timed out after 150ms')
    } finally {
      if (saved === undefined) delete process.env.OMP_MCP_TIMEOUT_MS
      else process.env.OMP_MCP_TIMEOUT_MS = saved
    }
  })

  it('15.8.1: an EPIPE between initialize and notifications/initialized fails the connect, and leaves no process (both profiles)', async () => {
    // The root says it as 18.3.4 does (an MCPTransportError, __test__/errors-current.test.mjs);
    // the 12.7 profile as the package's transport does.
    for (const [connectWith, message] of [
      [connectToServer, 'Transport closed while sending notification "notifications/initialized"'],
      [connect127, 'write EPIPE'],
    ]) {
      const m = marker()
      const { error } = await settle(connectWith('p', fixture(['--init-closes-stdin', m], { timeout: 5000, killGraceMs: 200 })))
      expect(error?.message).toBe(message)
      expect(processesWith(m)).toEqual([])
    }
  })

  it('roots/list is answered with the project directory (12.7: no roots); onRequest and onNotification are the caller’s', async () => {
    const c = await connect('r', fixture())
    const dir = process.cwd()
    expect((await c.transport.request('reverse', { method: 'roots/list' })).answer.result).toEqual({
      roots: [{ uri: pathToFileURL(dir).href, name: basename(dir) }],
    })
    expect((await c.transport.request('reverse', { method: 'sampling/createMessage' })).answer.error.code).toBe(-32601)
    const seen = []
    const own = await connect('o', fixture(), {
      onRequest: async (method) => ({ handled: method }),
      onNotification: (method, params) => seen.push([method, params]),
    })
    expect((await own.transport.request('reverse', { method: 'roots/list' })).answer.result).toEqual({ handled: 'roots/list' })
    await own.transport.request('notify', { count: 1 })
    await waitFor(() => seen.length === 1)
    expect(seen).toEqual([['fixture/note', { i: 0 }]])
  })
})

describe('resources and prompts (18.3.4)', () => {
  it('16.0.6, 17.1.6: a server without resources/templates/list has no templates, and keeps its resources', async () => {
    const c = await connect('f', fixture())
    expect(serverSupportsResources(c.capabilities)).toBe(true)
    expect(await listResourceTemplates(c)).toEqual([])
    expect(c.resourceTemplates).toEqual([])
    const resources = await listResources(c)
    expect(resources).toEqual([{ uri: 'fixture://a', name: 'a', mimeType: 'text/plain' }])
    expect(c.resources).toBe(resources)
    expect(await listResources(c)).toBe(resources)
    expect((await readResource(c, 'fixture://a')).contents[0].text).toBe('content of fixture://a')
  })

  it('16.1.17 (prompts): getPrompt sends no empty arguments; prompts are cached on the connection', async () => {
    const c = await connect('f', fixture())
    expect(serverSupportsPrompts(c.capabilities)).toBe(true)
    const prompts = await listPrompts(c)
    expect(prompts.map((p) => p.name)).toEqual(['greet'])
    expect(c.prompts).toBe(prompts)
    await getPrompt(c, 'greet', {})
    expect((await requestsOf(c, 'prompts/get')).at(-1).params).toEqual({ name: 'greet' })
    const got = await getPrompt(c, 'greet', { who: 'Ada' })
    expect(got.messages[0].content.text).toBe('Hello Ada from greet')
  })

  it('server-everything: resources, templates, subscriptions and prompts of a real server', async () => {
    const c = await connect('everything', everything())
    expect(serverSupportsResourceSubscriptions(c.capabilities)).toBe(true)
    const resources = await listResources(c)
    expect(resources.length).toBeGreaterThan(1)
    const templates = await listResourceTemplates(c)
    expect(templates.length).toBeGreaterThan(0)
    const uri = resources[0].uri
    expect((await readResource(c, uri)).contents[0].uri).toBe(uri)
    await subscribeToResources(c, [uri])
    await unsubscribeFromResources(c, [uri])
    await subscribeToResources(c, [])
    const prompts = await listPrompts(c)
    expect(prompts.length).toBeGreaterThan(0)
    const simple = prompts.find((p) => !p.arguments?.some((a) => a.required))
    const got = await getPrompt(c, simple.name)
    expect(Array.isArray(got.messages)).toBe(true)
  })

  it('without the capability: [] and no request; subscriptions only with resources.subscribe', async () => {
    const c = await connect('t', fixture(['--no-tools-cap']))
    const bare = { ...c, capabilities: {} }
    expect(await listResources(bare)).toEqual([])
    expect(await listPrompts(bare)).toEqual([])
    expect(await listResourceTemplates(bare)).toEqual([])
    await subscribeToResources(c, ['fixture://a'])
    expect(await requestsOf(c, 'resources/subscribe')).toEqual([])
    expect(serverSupportsResourceSubscriptions(c.capabilities)).toBe(false)
  })
})
