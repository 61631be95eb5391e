// SPEC 11.4 at the root manager: prepareConfig (the agent's OAuth credential lookup and refresh, the
// generated Authorization header, OAUTH_ACCESS_TOKEN, envPolicy / envLiteralKeys / headerPolicy, the
// injected resolveConfigValue, `oauth: false`), the injected discovery and logger, and the two
// reconciles (project config, browser filter). Against fixture servers; the HTTP transport's header
// precedence against the HTTP fixture. vitest (Node) and `bun test` (Bun).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native'
import { connectToServer, disconnectServer } from 'mcp-native/client'
import { configureMCP } from 'mcp-native/configure'
import { ROOT, fixture, startHttpFixture } from './helpers.mjs'

const HOOKS = [
  'lookupMcpOAuthCredential',
  'refreshStoredManagedMcpOAuthCredential',
  'resolveConfigValue',
  'loadAllMCPConfigs',
  'isBrowserMCPServer',
  'validateServerConfig',
  'logger',
]
const managers = []
afterEach(async () => {
  configureMCP(Object.fromEntries(HOOKS.map((k) => [k, undefined])))
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
})
function manage(...args) {
  const m = new MCPManager(...args)
  managers.push(m)
  return m
}

describe('prepareConfig (18.3.4)', () => {
  it('the agent’s credential lookup and refresh: a generated Authorization (http) or OAUTH_ACCESS_TOKEN (stdio); oauth: false skips it', async () => {
    const calls = []
    const storage = { name: 'agent storage' }
    configureMCP({
      lookupMcpOAuthCredential: (s, config) => {
        calls.push(['lookup', s === storage, config.auth?.credentialId ?? null])
        return config.auth ? { credentialId: config.auth.credentialId, credential: { access: 'stale' } } : undefined
      },
      refreshStoredManagedMcpOAuthCredential: async (s, id, opts) => {
        calls.push(['refresh', s === storage, id, opts.serverUrl ?? null, opts.forceRefresh ?? false, opts.keepCredentialOnRefreshFailure])
        return { credential: { access: `fresh-${id}` } }
      },
    })
    const m = manage(ROOT, null, { loadConfigs: async () => ({ configs: {}, sources: {} }) })
    m.setAuthStorage(storage)
    const http = {
      type: 'http',
      url: 'https://mcp.example.test/mcp',
      headers: { authorization: 'Bearer configured', 'X-A': '1' },
      auth: { type: 'oauth', credentialId: 'c1' },
    }
    const out = await m.prepareConfig(http)
    expect(out.headers).toEqual({ 'X-A': '1', Authorization: 'Bearer fresh-c1' })
    expect(http.headers.authorization).toBe('Bearer configured')
    const stdio = { command: 'srv', env: { A: 'literal-a' }, auth: { type: 'oauth', credentialId: 'c2' } }
    expect((await m.prepareConfig(stdio, { forceRefresh: true })).env).toEqual({ A: 'literal-a', OAUTH_ACCESS_TOKEN: 'fresh-c2' })
    expect((await m.prepareConfig(http, { oauth: false })).headers).toEqual({ authorization: 'Bearer configured', 'X-A': '1' })
    expect(calls).toEqual([
      ['lookup', true, 'c1'],
      ['refresh', true, 'c1', 'https://mcp.example.test/mcp', false, true],
      ['lookup', true, 'c2'],
      ['refresh', true, 'c2', null, true, true],
    ])
  })

  it('a refresh that throws or removes the credential: logged, no credential injected, the connect goes on', async () => {
    const lines = []
    configureMCP({
      logger: { warn: (message) => lines.push(message) },
      lookupMcpOAuthCredential: () => ({ credentialId: 'c' }),
      refreshStoredManagedMcpOAuthCredential: async (_s, id) => {
        if (id === 'c') throw new Error('token endpoint down')
        return {}
      },
    })
    const m = manage(ROOT, null, { loadConfigs: async () => ({ configs: {}, sources: {} }) })
    m.setAuthStorage({})
    const out = await m.prepareConfig({ command: 'x', env: {} })
    expect(out.env).toEqual({})
    expect(lines).toEqual(['Failed to resolve OAuth credential'])
  })

  it('envPolicy literal, envLiteralKeys and headerPolicy origin-locked keep values as they are; the rest resolve (injected resolver)', async () => {
    configureMCP({ resolveConfigValue: async (v) => (v === 'EMPTY' ? '' : `<${v}>`) })
    const m = manage(ROOT, null, { loadConfigs: async () => ({ configs: {}, sources: {} }) })
    expect((await m.prepareConfig({ command: 'x', env: { A: 'HOME', B: 'EMPTY', C: '!cmd' }, envLiteralKeys: ['C'] })).env).toEqual({
      A: '<HOME>',
      C: '!cmd',
    })
    const literal = { command: 'x', env: { A: 'HOME', B: '' }, envPolicy: 'literal' }
    expect((await m.prepareConfig(literal)).env).toEqual({ A: 'HOME', B: '' })
    const locked = { type: 'http', url: 'http://h/mcp', headers: { K: 'TOKEN_VAR' }, headerPolicy: 'origin-locked' }
    expect((await m.prepareConfig(locked)).headers).toEqual({ K: 'TOKEN_VAR' })
    expect((await m.prepareConfig({ ...locked, headerPolicy: undefined })).headers).toEqual({ K: '<TOKEN_VAR>' })
    // A `__proto__` env key is a variable like any other.
    const env = JSON.parse('{"__proto__":"P"}')
    const out = await m.prepareConfig({ command: 'x', env })
    expect(Object.keys(out.env)).toEqual(['__proto__'])
    expect(Object.getOwnPropertyDescriptor(out.env, '__proto__')?.value).toBe('<P>')
  })
})

describe('the injected discovery and the reconciles (18.3.4)', () => {
  it('the agent’s loadAllMCPConfigs is the default loader; reconcileProjectConfig disconnects and connects project servers', async () => {
    let projectOn = true
    const loads = []
    configureMCP({
      loadAllMCPConfigs: async (cwd, options) => {
        loads.push([cwd, options.enableProjectConfig])
        const configs = { user: fixture() }
        const sources = { user: { provider: 'omp', providerName: 'OMP', path: '/u', level: 'user' } }
        if (options.enableProjectConfig !== false) {
          configs.proj = fixture()
          sources.proj = { provider: 'omp', providerName: 'OMP', path: '/p', level: 'project' }
        }
        return { configs, sources, exaApiKeys: [] }
      },
    })
    const m = manage(ROOT, null)
    // Before the first discovery: nothing to do.
    await m.reconcileProjectConfig(false)
    expect(loads).toEqual([])
    await m.discoverAndConnect({ startupTimeoutMs: 0 })
    expect(m.getConnectedServers().sort()).toEqual(['proj', 'user'])
    projectOn = false
    await m.reconcileProjectConfig(projectOn)
    expect(m.getConnectedServers()).toEqual(['user'])
    expect(m.getTools().some((t) => t.name.startsWith('mcp__proj_'))).toBe(false)
    // The same setting again: no load.
    const before = loads.length
    await m.reconcileProjectConfig(false)
    expect(loads.length).toBe(before)
    await m.reconcileProjectConfig(true)
    await m.waitForPendingConnections()
    expect(m.getConnectedServers().sort()).toEqual(['proj', 'user'])
    expect(loads.map((l) => l[1])).toEqual([true, false, true])
  })

  it('reconcileBrowserFilter: the injected isBrowserMCPServer’s servers go when enabled and come back when not', async () => {
    const filters = []
    configureMCP({
      isBrowserMCPServer: (name) => name === 'browser',
      loadAllMCPConfigs: async (_cwd, options) => {
        filters.push(options.filterBrowser ?? null)
        const configs = { plain: fixture() }
        if (!options.filterBrowser) configs.browser = fixture()
        return { configs, sources: {}, exaApiKeys: [] }
      },
    })
    const m = manage(ROOT, null)
    await m.discoverAndConnect({ startupTimeoutMs: 0, filterBrowser: true })
    expect(m.getConnectedServers()).toEqual(['plain'])
    await m.reconcileBrowserFilter(false)
    await m.waitForPendingConnections()
    expect(m.getConnectedServers().sort()).toEqual(['browser', 'plain'])
    // Serialized: the two calls end in the order made, the last one's state wins.
    await Promise.all([m.reconcileBrowserFilter(true), m.reconcileBrowserFilter(false), m.reconcileBrowserFilter(true)])
    expect(m.getConnectedServers()).toEqual(['plain'])
    expect(filters).toEqual([true, false, false, false, false])
    // Without the hook no server is a browser server.
    configureMCP({ isBrowserMCPServer: undefined })
    await m.reconcileBrowserFilter(true)
    expect(m.getConnectedServers()).toEqual(['plain'])
  })
})

describe('the injected validateServerConfig (18.3.4 connectServers)', () => {
  it('its problems refuse a config with its words (joined by "; "), told as connecting then failed; what it passes still meets the package’s check', async () => {
    const seen = []
    configureMCP({
      validateServerConfig: (name) => {
        seen.push(name)
        return name === 'vetoed' ? [`Server "${name}": not allowed here`, 'second problem'] : []
      },
    })
    const m = manage(ROOT, null)
    const events = []
    const result = await m.connectServers({ ok: fixture(), vetoed: fixture(), broken: { type: 'http' } }, {}, (e) => events.push(e), 0)
    expect(result.errors.get('vetoed')).toBe('Server "vetoed": not allowed here; second problem')
    // The package's own check still refuses what cannot run.
    expect(result.errors.get('broken')).toBe('Server "broken": http server requires "url" field')
    expect(result.connectedServers).toEqual(['ok'])
    expect(m.getServerConfig('vetoed')).toBeUndefined()
    expect(events.slice(0, 3)).toEqual([
      { type: 'connecting', serverNames: ['ok', 'vetoed', 'broken'] },
      { type: 'failed', serverName: 'vetoed', error: 'Server "vetoed": not allowed here; second problem' },
      { type: 'failed', serverName: 'broken', error: 'Server "broken": http server requires "url" field' },
    ])
    // A connected server is not checked again.
    seen.length = 0
    await m.connectServers({ ok: fixture() }, {}, undefined, 0)
    expect(seen).toEqual([])
  })

  it('a validator that throws or returns no list: logged, the package’s check alone decides', async () => {
    const lines = []
    configureMCP({
      logger: { warn: (message) => lines.push(message), debug() {}, error() {} },
      validateServerConfig: (name) => {
        if (name === 'a') throw new Error('validator bug')
        return 'not a list'
      },
    })
    const m = manage(ROOT, null)
    const result = await m.connectServers({ a: fixture(), b: fixture() }, {}, undefined, 0)
    expect(result.connectedServers.sort()).toEqual(['a', 'b'])
    expect(lines.filter((l) => l.startsWith('validateServerConfig')).length).toBe(2)
  })
})

describe('the HTTP transport’s header precedence (18.3.4, both profiles)', () => {
  let server
  let base
  beforeAll(async () => {
    ;({ child: server, base } = await startHttpFixture())
  })
  afterAll(() => server.kill())

  it('configured headers never replace the protocol headers, in any case; a configured MCP-Protocol-Version is dropped', async () => {
    const c = await connectToServer('h', {
      type: 'http',
      url: `${base}/mcp`,
      headers: { accept: 'text/plain', 'Content-Type': 'text/plain', 'mcp-protocol-version': '1999-01-01', 'X-Key': 'k' },
    })
    try {
      const seen = await c.transport.request('headers')
      expect(seen.accept).toBe('application/json, text/event-stream')
      expect(seen['content-type']).toBe('application/json')
      expect(seen['mcp-protocol-version']).toBe('2025-11-25')
      expect(seen['x-key']).toBe('k')
    } finally {
      await disconnectServer(c)
    }
  })
})
