// Issue 9 / SPEC 6: the manager options and edge cases the agent relies on (onRequest, the
// options every loadConfigs receives, config values, refresh errors, the logger). Runs under
// vitest (Node) and `bun test` (Bun) alike.
import { afterEach, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native/compat-12.7/manager'
import { fixture, ROOT, settle } from './helpers.mjs'

const managers = []
function manage(options, cache = null) {
  const m = new MCPManager(ROOT, cache, options)
  managers.push(m)
  return m
}
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
})
const srv = (flags = [], extra = {}) => fixture(flags, { killGraceMs: 200, ...extra })

function recordingLogger() {
  const lines = []
  const log =
    (level) =>
    (...args) =>
      lines.push([level, ...args])
  return { lines, logger: { error: log('error'), warn: log('warn'), debug: log('debug') } }
}

describe('onRequest (SPEC 6, 9.1)', () => {
  it('answers every server’s requests with the server name, and declares elicitation and sampling', async () => {
    const seen = []
    const m = manage({
      onRequest: async (serverName, method, params) => {
        seen.push({ serverName, method, params })
        return { action: 'accept', content: { ok: true } }
      },
    })
    await m.connectServers({ a: srv(), b: srv() }, {})
    const reply = await m.getConnection('b').transport.request('reverse', { method: 'elicitation/create', params: { message: 'q' } })
    expect(reply.answer.result).toEqual({ action: 'accept', content: { ok: true } })
    expect(seen).toEqual([{ serverName: 'b', method: 'elicitation/create', params: { message: 'q' } }])
    const { requests } = await m.getConnection('a').transport.request('requests')
    const init = requests.find((r) => r.method === 'initialize')
    expect(init.params.capabilities).toEqual({ roots: { listChanged: false }, elicitation: {}, sampling: {} })
  })

  it('explicit capabilities win; without onRequest the defaults are the reference’s', async () => {
    const m = manage({ onRequest: () => ({}), capabilities: { roots: { listChanged: true } } })
    const plain = manage()
    await m.connectServers({ a: srv() }, {})
    await plain.connectServers({ p: srv() }, {})
    const initOf = async (mgr, name) =>
      (await mgr.getConnection(name).transport.request('requests')).requests.find((r) => r.method === 'initialize')
    expect((await initOf(m, 'a')).params.capabilities).toEqual({ roots: { listChanged: true } })
    expect((await initOf(plain, 'p')).params.capabilities).toEqual({ roots: { listChanged: false } })
  })
})

describe('loadConfigs options (SPEC 6)', () => {
  it('every loadConfigs receives enableProjectConfig, filterExa and disabledProviders; the call’s list wins', async () => {
    const calls = []
    const loadConfigs = async (cwd, options) => {
      calls.push({ cwd, options })
      return { configs: {}, sources: {}, exaApiKeys: ['k'] }
    }
    const m = manage({ loadConfigs, disabledProviders: ['claude'] })
    const r1 = await m.discoverAndConnect()
    await m.discoverAndConnect({ enableProjectConfig: false, filterExa: false, disabledProviders: ['cursor'] })
    expect(r1.exaApiKeys).toEqual(['k'])
    expect(calls).toEqual([
      { cwd: ROOT, options: { enableProjectConfig: true, filterExa: true, disabledProviders: ['claude'] } },
      { cwd: ROOT, options: { enableProjectConfig: false, filterExa: false, disabledProviders: ['cursor'] } },
    ])
  })
})

describe('config values (SPEC 6.3)', () => {
  it('an env-name value whose variable is set but empty keeps the literal', async () => {
    process.env.MCP_NATIVE_EMPTY_VAR = ''
    process.env.MCP_NATIVE_FULL_VAR = 'full'
    try {
      const m = manage()
      const out = await m.prepareConfig({ command: 'x', env: { A: 'MCP_NATIVE_EMPTY_VAR', B: 'MCP_NATIVE_FULL_VAR', C: 'literal' } })
      expect(out.env).toEqual({ A: 'MCP_NATIVE_EMPTY_VAR', B: 'full', C: 'literal' })
    } finally {
      delete process.env.MCP_NATIVE_EMPTY_VAR
      delete process.env.MCP_NATIVE_FULL_VAR
    }
  })

  it('an auth storage whose get throws or rejects: a warning, and the config without the token', async () => {
    for (const get of [
      () => {
        throw new Error('keychain locked')
      },
      async () => {
        throw new Error('keychain locked')
      },
    ]) {
      const { lines, logger } = recordingLogger()
      const m = manage({ logger })
      m.setAuthStorage({ get })
      const out = await m.prepareConfig({ type: 'http', url: 'http://127.0.0.1:9/mcp', auth: { type: 'oauth', credentialId: 'c1' } })
      expect(out.headers).toBeUndefined()
      expect(lines.filter(([level]) => level === 'warn').length).toBe(1)
    }
  })
})

describe('refresh and the logger (SPEC 6)', () => {
  it('refreshServerTools propagates an error; refreshAllTools logs it and refreshes the others', async () => {
    const { lines, logger } = recordingLogger()
    const m = manage({ logger })
    await m.connectServers({ ok: srv(), broken: srv() }, {})
    await m.getConnection('broken').transport.request('fail-tools-list')
    expect((await settle(m.refreshServerTools('broken'))).error?.message).toBe('MCP error -32000: list failed')
    await m.refreshAllTools()
    expect(lines.some(([level, message]) => level === 'error' && String(message).includes('list failed'))).toBe(true)
    expect(m.getTools().filter((t) => t.mcpServerName === 'ok').length).toBe(6)
  })

  it('a server that fails to load is logged as the reference logs it', async () => {
    const { lines, logger } = recordingLogger()
    const m = manage({ logger })
    await m.connectServers({ gone: { command: '/nonexistent/mcp-native-test' } }, {})
    const line = lines.find(([, message]) => message === 'MCP tool load failed')
    expect(line[0]).toBe('error')
    expect(line[2]).toMatchObject({ server: 'gone' })
    expect(line[2].error).toMatch(/ENOENT/)
  })
})

describe('/mcp add then reload (issue 9)', () => {
  it('a server added with addMCPServer to <cwd>/.omp/mcp.json connects on the next discoverAndConnect, with its tools', async () => {
    const { mkdtempSync, mkdirSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { addMCPServer, getMCPConfigPath } = await import('mcp-native/compat-12.7/config-writer')
    const dir = mkdtempSync(join(tmpdir(), 'mcp-native-reload-'))
    const home = join(dir, 'home')
    const cwd = join(dir, 'project')
    mkdirSync(home)
    mkdirSync(cwd)
    const saved = { HOME: process.env.HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR, PI_CONFIG_DIR: process.env.PI_CONFIG_DIR }
    process.env.HOME = home
    delete process.env.PI_CODING_AGENT_DIR
    delete process.env.PI_CONFIG_DIR
    try {
      const m = new MCPManager(cwd, null)
      managers.push(m)
      const first = await m.discoverAndConnect()
      expect(first.connectedServers).toEqual([])
      expect(m.getTools()).toEqual([])

      // What the agent's `/mcp add` does: write the project file, then reload.
      const path = getMCPConfigPath('project', cwd)
      expect(path).toBe(join(cwd, '.omp', 'mcp.json'))
      await addMCPServer(path, 'added', srv())
      const second = await m.discoverAndConnect()
      expect(second.connectedServers).toEqual(['added'])
      expect(m.getSource('added')).toEqual({ provider: 'native', providerName: 'OMP', path, level: 'project' })
      expect(m.getTools().map((t) => t.name)).toContain('mcp_added_echo')
      const echo = m.getTools().find((t) => t.name === 'mcp_added_echo')
      const out = await echo.execute('call-1', { message: 'hi' })
      expect(out.content[0].text).toContain('hi')
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }, 20000)
})
