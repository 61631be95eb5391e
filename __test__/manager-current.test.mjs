// SPEC 11.3–11.5: the manager at the package root, as the agent ships it today (18.3.4): the
// startup window, the startup barriers, the reconnect policy and its crash-storm breaker, the
// status events, the constructor's two forms — against the fixture server as child processes.
// Tests named after an agent CHANGELOG entry are SPEC 11.5's. The timing of the policy (the
// ladder, the breaker's window, the quiet retries of a lost remote server) is asserted exactly on
// the paused clock in crates/mcp-native-core/tests/manager_policy.rs. vitest (Node) and `bun test`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

import { MCPManager, createMCPManager, discoverAndLoadMCPTools } from 'mcp-native'
import * as compat from 'mcp-native/compat-12.7'
import { resolveSubscriptionPostAction, sortMCPToolsByName } from 'mcp-native/manager'
import { ROOT, fixture, marker, processesWith, waitFor } from './helpers.mjs'

const BREAKER = 'MCP server crashed too many times; automatic reconnects suspended'
const FIXTURE_TOOLS = ['add', 'big', 'echo', 'fail', 'mixed', 'slow']

const managers = []
const folders = []
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true })
  MCPManager.resetForTests()
})
function manage(...args) {
  const m = new MCPManager(...args)
  managers.push(m)
  return m
}
/** The manager's status events, as its listeners hear them. */
function listen(m) {
  const events = []
  m.addConnectionStatusListener((e) => events.push(e))
  return events
}
const names = (tools) => tools.map((t) => t.name)
const toolsOf = (server) => FIXTURE_TOOLS.map((t) => `mcp__${server}_${t}`)
const connected = (serverName) => ({ type: 'connected', serverName })
const reconnecting = (serverName) => ({ type: 'reconnecting', serverName })

describe('startup (18.3.4)', () => {
  it('15.10.7, 17.1.0, 18.3.0: an unresponsive server without cached tools does not hold up startup; its tools come when it answers', async () => {
    const m = manage(ROOT, null)
    const events = listen(m)
    const perCall = []
    const changes = []
    m.setOnToolsChanged((tools) => {
      changes.push(names(tools))
    })
    const started = Date.now()
    const result = await m.connectServers({ fast: fixture(), slow: fixture(['--init-delay-ms=4000']) }, {}, (e) => perCall.push(e), 1500)
    // The window (1.5 s here), not the slow server (4 s).
    expect(Date.now() - started).toBeLessThan(3500)
    expect(result.connectedServers).toEqual(['fast'])
    expect(result.errors.size).toBe(0)
    expect(names(result.tools)).toEqual(toolsOf('fast'))
    expect(m.getConnectionStatus('slow')).toBe('connecting')
    // Print mode's barrier reports the slow server.
    expect(await m.waitForStartup(50)).toEqual({ connected: ['fast'], pending: ['slow'], failed: [] })
    // In the background it connects; its tools are added, sorted in with the others.
    expect(await m.waitForStartup(0)).toEqual({ connected: ['fast', 'slow'], pending: [], failed: [] })
    expect(names(m.getTools())).toEqual([...toolsOf('fast'), ...toolsOf('slow')].sort())
    expect(changes.at(-1)).toEqual(names(m.getTools()))
    expect(perCall).toEqual([{ type: 'connecting', serverNames: ['fast', 'slow'] }, connected('fast'), connected('slow')])
    expect(events).toEqual(perCall)
  })

  it('startupTimeoutMs 0 waits for every server; OMP_MCP_STARTUP_TIMEOUT_MS wins over it', async () => {
    const m = manage(ROOT, null)
    const all = await m.connectServers({ slow: fixture(['--init-delay-ms=800']) }, {}, undefined, 0)
    expect(all.connectedServers).toEqual(['slow'])
    const saved = process.env.OMP_MCP_STARTUP_TIMEOUT_MS
    process.env.OMP_MCP_STARTUP_TIMEOUT_MS = '0'
    try {
      const m2 = manage(ROOT, null)
      const env = await m2.connectServers({ slow: fixture(['--init-delay-ms=800']) }, {}, undefined, 50)
      expect(env.connectedServers).toEqual(['slow'])
    } finally {
      if (saved === undefined) delete process.env.OMP_MCP_STARTUP_TIMEOUT_MS
      else process.env.OMP_MCP_STARTUP_TIMEOUT_MS = saved
    }
  })

  it('waitForPendingConnections waits for the servers left in the background', async () => {
    const m = manage(ROOT, null)
    await m.connectServers({ slow: fixture(['--init-delay-ms=1000']), broken: { command: '/nonexistent/server-binary' } }, {}, undefined, 1)
    await m.waitForPendingConnections()
    expect(m.getConnectedServers()).toEqual(['slow'])
    expect(m.getConnectionStatus('broken')).toBe('disconnected')
    const status = await m.waitForStartup(1)
    expect(status.failed).toEqual([{ name: 'broken', error: expect.stringContaining('ENOENT') }])
  })

  it('validation failures are announced with the others, then failed with their source', async () => {
    const m = manage(ROOT, null)
    const events = listen(m)
    const sources = { bad: { provider: 'test', providerName: 'Test', path: '/cfg/.mcp.json', level: 'project' } }
    const result = await m.connectServers({ bad: { type: 'http' }, good: fixture() }, sources, undefined, 0)
    const message = 'Server "bad": http server requires "url" field'
    expect(result.errors).toEqual(new Map([['bad', message]]))
    expect(events).toEqual([
      { type: 'connecting', serverNames: ['bad', 'good'] },
      { type: 'failed', serverName: 'bad', error: message, sourcePath: '/cfg/.mcp.json' },
      connected('good'),
    ])
    // A refused config is not known (18.3.4); a connected one is.
    expect(m.getServerConfig('bad')).toBeUndefined()
    expect(m.getServerConfig('good')).toMatchObject({ command: fixture().command })
  })

  it('18.1.5: a start that times out in its handshake is tried again at once, and its caller hears the retry through', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-native-once-'))
    folders.push(dir)
    const m = manage(ROOT, null)
    const events = listen(m)
    const perCall = []
    const config = fixture(['--init-delay-ms=5000', `--init-delay-once=${join(dir, 'first')}`], { timeout: 700 })
    const result = await m.connectServers({ t: config }, {}, (e) => perCall.push(e), 1)
    expect(result.connectedServers).toEqual([])
    expect(await m.waitForStartup(0)).toEqual({ connected: ['t'], pending: [], failed: [] })
    const timeout = 'Connection to MCP server "t" timed out after 700ms'
    const story = [
      { type: 'connecting', serverNames: ['t'] },
      { type: 'failed', serverName: 't', error: timeout },
      reconnecting('t'),
      connected('t'),
    ]
    expect(perCall).toEqual(story)
    expect(events).toEqual(story)
    expect(names(m.getTools())).toEqual(toolsOf('t'))
  })

  it('a loader that throws is the startup failure of `.mcp.json`', async () => {
    const m = manage(ROOT, null, async () => {
      throw new Error('bad json')
    })
    const events = listen(m)
    const perCall = []
    await expect(m.discoverAndConnect({ onStatus: (e) => perCall.push(e) })).rejects.toThrow('bad json')
    const failed = { type: 'failed', serverName: '.mcp.json', error: 'bad json' }
    expect(perCall).toEqual([failed])
    expect(events).toEqual([failed])
    expect(await m.waitForStartup(10)).toEqual({ connected: [], pending: [], failed: [{ name: '.mcp.json', error: 'bad json' }] })
  })
})

describe('reconnects (18.3.4)', () => {
  it('a killed server is connected again at once, its tools kept meanwhile', async () => {
    const m = manage(ROOT, null)
    const events = listen(m)
    let toolsWhileReconnecting
    m.addConnectionStatusListener((e) => {
      if (e.type === 'reconnecting') toolsWhileReconnecting = names(m.getTools())
    })
    await m.connectServers({ k: fixture() }, {}, undefined, 0)
    const first = m.getConnection('k')
    const pid = first.transport.pid
    process.kill(pid, 'SIGKILL')
    await waitFor(() => events.filter((e) => e.type === 'connected').length === 2, 10000)
    expect(events).toEqual([{ type: 'connecting', serverNames: ['k'] }, connected('k'), reconnecting('k'), connected('k')])
    expect(toolsWhileReconnecting).toEqual(toolsOf('k'))
    const second = m.getConnection('k')
    expect(second).not.toBe(first)
    expect(second.transport.pid).not.toBe(pid)
    expect(names(m.getTools())).toEqual(toolsOf('k'))
    const echo = m.getTools().find((t) => t.name === 'mcp__k_echo')
    const out = await echo.execute('c', { message: 'back' })
    expect(out.content[0].text).toBe('back')
  })

  it('15.7.5: a server that exits after every handshake is stopped by the breaker, its tools kept; a manual reconnect starts over', async () => {
    const mk = marker()
    const m = manage(ROOT, null)
    const events = listen(m)
    await m.connectServers({ storm: fixture([mk, '--exit-after-ms=300']) }, {}, undefined, 0)
    await waitFor(() => events.some((e) => e.type === 'failed'), 30000)
    expect(events.filter((e) => e.type === 'failed')).toEqual([{ type: 'failed', serverName: 'storm', error: BREAKER }])
    // The first connect and five reconnects; the sixth drop trips the breaker.
    expect(events.filter((e) => e.type === 'connected')).toHaveLength(6)
    expect(events.filter((e) => e.type === 'reconnecting')).toHaveLength(6)
    expect(m.getConnectionStatus('storm')).toBe('disconnected')
    // The torn-down connection is no longer handed out (18.3.4); its tools stay.
    expect(m.getConnection('storm')).toBeUndefined()
    expect(names(m.getTools())).toEqual(toolsOf('storm'))
    await waitFor(() => processesWith(mk).length === 0)
    // Automatic reconnects stay off; the user's starts over.
    expect(await m.reconnectServer('storm')).toBeNull()
    const again = await m.reconnectServer('storm', { manual: true })
    expect(again).not.toBeNull()
    expect(again).toBe(m.getConnection('storm'))
  })

  it('reconnect: false turns the policy off: a killed server is gone with its tools', async () => {
    const mk = marker()
    const m = manage(ROOT, null, { reconnect: false })
    const statuses = []
    m.onServerStatus = (_n, s) => statuses.push(s)
    await m.connectServers({ k: fixture([mk]) }, {}, undefined, 0)
    process.kill(m.getConnection('k').transport.pid, 'SIGKILL')
    await waitFor(() => statuses.includes('disconnected'))
    expect(m.getTools()).toEqual([])
    expect(m.getConnectionStatus('k')).toBe('disconnected')
    expect(await m.reconnectServer('k', { manual: true })).toBeNull()
    expect(processesWith(mk)).toEqual([])
  })

  it('concurrent reconnects share one', async () => {
    const m = manage(ROOT, null)
    await m.connectServers({ k: fixture() }, {}, undefined, 0)
    const pid = m.getConnection('k').transport.pid
    const [a, b] = await Promise.all([m.reconnectServer('k'), m.reconnectServer('k')])
    expect(a).not.toBeNull()
    expect(b).toBe(a)
    expect(a.transport.pid).not.toBe(pid)
  })

  it('an auth challenge goes to the auth handler, whose config is used; without one there is no reconnect', async () => {
    const m = manage(ROOT, null)
    await m.connectServers({ k: fixture() }, {}, undefined, 0)
    const challenge = { wwwAuthenticate: ['Bearer error="invalid_token"'] }
    expect(await m.reconnectServer('k', { authChallenge: challenge })).toBeNull()
    const seen = []
    m.setAuthHandler(async (name, c) => {
      seen.push([name, c])
      return fixture(['--instructions=renewed'])
    })
    const pid = m.getConnection('k').transport.pid
    const renewed = await m.reconnectServer('k', { authChallenge: challenge })
    expect(seen).toEqual([['k', challenge]])
    expect(renewed.transport.pid).not.toBe(pid)
    expect(renewed.config.args).toContain('--instructions=renewed')
    expect(m.getServerConfig('k')).toBe(renewed.config)
  })
})

describe('handshake, deadline and roots (18.3.4)', () => {
  it('the manager asks for 2025-11-25, takes timeout 0 as no deadline, and answers roots/list with its cwd', async () => {
    const m = manage(ROOT, null)
    const result = await m.connectServers({ k: fixture(['--init-delay-ms=300'], { timeout: 0 }) }, {}, undefined, 0)
    expect(result.connectedServers).toEqual(['k'])
    const t = m.getConnection('k').transport
    const init = (await t.request('requests')).requests.find((r) => r.method === 'initialize')
    expect(init.params.protocolVersion).toBe('2025-11-25')
    expect((await t.request('reverse', { method: 'roots/list' })).answer.result).toEqual({
      roots: [{ uri: pathToFileURL(ROOT).href, name: basename(ROOT) }],
    })
    expect((await t.request('reverse', { method: 'elicitation/create' })).answer.error.code).toBe(-32601)
  })
})

describe('resources, prompts, instructions, notifications (18.3.4)', () => {
  it('catalogs load after the tools; getters, reads, prompts and instructions (instructions: false honoured)', async () => {
    const m = manage(ROOT, null)
    const catalog = []
    m.addCatalogChangeListener((e) => catalog.push(e))
    const promptsChanged = []
    m.setOnPromptsChanged((n) => promptsChanged.push(n))
    await m.connectServers(
      { k: fixture(['--instructions=use me']), q: fixture(['--instructions=hidden'], { instructions: false }) },
      {},
      undefined,
      0,
    )
    await waitFor(() => catalog.filter((e) => e.serverName === 'k').length === 2)
    expect(catalog.filter((e) => e.serverName === 'k')).toEqual([
      { serverName: 'k', kind: 'resources' },
      { serverName: 'k', kind: 'prompts' },
    ])
    expect(m.getServerResources('k')).toEqual({ resources: [{ uri: 'fixture://a', name: 'a', mimeType: 'text/plain' }], templates: [] })
    expect(m.getServerPrompts('k').map((p) => p.name)).toEqual(['greet'])
    expect((await m.readServerResource('k', 'fixture://a')).contents[0].text).toBe('content of fixture://a')
    expect((await m.executePrompt('k', 'greet', { who: 'Ada' })).messages[0].content.text).toBe('Hello Ada from greet')
    expect(await m.readServerResource('nope', 'x')).toBeUndefined()
    expect(m.getServerResources('nope')).toBeUndefined()
    expect(m.getServerInstructions()).toEqual(new Map([['k', 'use me']]))
    expect(promptsChanged).toContain('k')
    await m.ensureServerResources('k')
  })

  it('notifications come after the manager refreshed the catalog; they wait (100 at most) for the first listener', async () => {
    const m = manage(ROOT, null)
    const catalog = []
    m.addCatalogChangeListener((e) => catalog.push(e))
    await m.connectServers({ k: fixture() }, {}, undefined, 0)
    await waitFor(() => catalog.length === 2)
    const t = m.getConnection('k').transport
    await t.request('emit', { method: 'notifications/prompts/list_changed' })
    await waitFor(() => catalog.length === 3)
    await t.request('emit', { method: 'custom/thing', params: { a: 1 } })
    const got = []
    const stop = m.addNotificationListener((server, method, params) => got.push([server, method, params]))
    await waitFor(() => got.length === 2)
    expect(got).toEqual([
      ['k', 'notifications/prompts/list_changed', undefined],
      ['k', 'custom/thing', { a: 1 }],
    ])
    stop()
    for (let i = 0; i < 105; i++) await t.request('emit', { method: 'n', params: { i } })
    const late = []
    m.addNotificationListener((_s, _m, p) => late.push(p.i))
    expect(late).toHaveLength(100)
    expect(late[0]).toBe(5)
  })

  it('subscriptions follow setNotificationsEnabled; resources/updated reaches the handler only for subscribed URIs', async () => {
    const m = manage(ROOT, null)
    const catalog = []
    m.addCatalogChangeListener((e) => catalog.push(e))
    const updated = []
    m.setOnResourcesChanged((server, uri) => updated.push([server, uri]))
    await m.connectServers({ s: fixture(['--subscribe']) }, {}, undefined, 0)
    await waitFor(() => catalog.length === 2)
    m.setNotificationsEnabled(true)
    await waitFor(() => m.getNotificationState().subscriptions.get('s')?.size === 1)
    expect(m.getNotificationState().enabled).toBe(true)
    const t = m.getConnection('s').transport
    await t.request('emit', { method: 'notifications/resources/updated', params: { uri: 'fixture://zzz' } })
    await t.request('emit', { method: 'notifications/resources/updated', params: { uri: 'fixture://a' } })
    await waitFor(() => updated.length === 1)
    expect(updated).toEqual([['s', 'fixture://a']])
    m.setNotificationsEnabled(false)
    expect(m.getNotificationState().subscriptions.size).toBe(0)
    await waitFor(async () => (await t.request('requests')).requests.some((r) => r.method === 'resources/unsubscribe'))
  })
})

describe('the surface', () => {
  it("the constructor takes the agent's positional arguments, or today's options object", async () => {
    const seen = []
    const loader = async (cwd, options) => {
      seen.push([cwd, options])
      return { configs: { a: fixture() }, sources: {}, exaApiKeys: ['key'] }
    }
    const policy = { ladderMs: [10, 20], retryBaseMs: 100, retryMaxMs: 200 }
    const m1 = manage(ROOT, null, loader, policy)
    expect(m1.reconnectPolicy).toBe(policy)
    const r1 = await m1.discoverAndConnect({ startupTimeoutMs: 0, filterBrowser: true })
    expect(seen[0][0]).toBe(ROOT)
    expect(seen[0][1]).toMatchObject({ enableProjectConfig: true, filterExa: true, filterBrowser: true })
    expect(r1.exaApiKeys).toEqual(['key'])
    expect(r1.connectedServers).toEqual(['a'])
    const m2 = manage(ROOT, null, { loadConfigs: loader })
    await m2.discoverAndConnect({ startupTimeoutMs: 0 })
    expect(seen).toHaveLength(2)
    expect(m2.reconnectPolicy).toEqual({ ladderMs: [500, 1000, 2000, 4000], retryBaseMs: 15000, retryMaxMs: 300000 })
    const m3 = manage(ROOT, null, loader, null, { onNotification: () => {} })
    expect(typeof m3.onNotification).toBe('function')
  })

  it('createMCPManager and discoverAndLoadMCPTools use the root manager; the 12.7 profile keeps its own', async () => {
    const { manager } = await createMCPManager(ROOT, { loadConfigs: async () => ({ configs: {}, sources: {}, exaApiKeys: [] }) })
    managers.push(manager)
    expect(manager).toBeInstanceOf(MCPManager)
    const loaded = await discoverAndLoadMCPTools(ROOT, {
      cacheStorage: null,
      loadConfigs: async () => ({ configs: { a: fixture() }, sources: {}, exaApiKeys: [] }),
      startupTimeoutMs: 0,
    })
    managers.push(loaded.manager)
    expect(loaded.manager).toBeInstanceOf(MCPManager)
    expect(loaded.connectedServers).toEqual(['a'])
    expect(typeof loaded.manager.waitForStartup).toBe('function')
    expect(compat.MCPManager).not.toBe(MCPManager)
    const old = new compat.MCPManager(ROOT, null)
    managers.push(old)
    expect(old).not.toBeInstanceOf(MCPManager)
    expect(old.waitForStartup).toBeUndefined()
  })

  it('the process-wide instance, the tool order, the subscription rule', () => {
    const m = manage(ROOT, null)
    expect(MCPManager.instance()).toBeUndefined()
    MCPManager.setInstance(m)
    expect(MCPManager.instance()).toBe(m)
    MCPManager.resetForTests()
    expect(MCPManager.instance()).toBeUndefined()
    const tools = [{ name: 'b' }, { name: 'a_2' }, { name: 'a' }, { name: 'B' }]
    expect(sortMCPToolsByName(tools)).toBe(tools)
    expect(names(tools)).toEqual(['B', 'a', 'a_2', 'b'])
    expect(resolveSubscriptionPostAction(false, 1, 1)).toBe('rollback')
    expect(resolveSubscriptionPostAction(true, 2, 1)).toBe('ignore')
    expect(resolveSubscriptionPostAction(true, 1, 1)).toBe('apply')
  })

  it('a throwing status listener or tools-changed handler breaks nothing', async () => {
    const m = manage(ROOT, null)
    m.addConnectionStatusListener(() => {
      throw new Error('listener broke')
    })
    const events = listen(m)
    const remove = m.addConnectionStatusListener(() => {
      throw new Error('removed before it could break')
    })
    remove()
    m.setOnToolsChanged(async () => {
      throw new Error('handler broke')
    })
    const result = await m.connectServers({ k: fixture() }, {}, undefined, 0)
    expect(result.connectedServers).toEqual(['k'])
    expect(events).toEqual([{ type: 'connecting', serverNames: ['k'] }, connected('k')])
    expect(m.getConnectionStatus('k')).toBe('connected')
  })
})
