// SPEC 8.4 / 8.10 (L1–L3) / 8.11: discoverAndLoadMCPTools. Runs under vitest (Node) and
// `bun test` (Bun) alike; the tool cache lives in a temporary agent directory.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import { discoverAndLoadMCPTools } from 'mcp-native/compat-12.7/loader'
import { MCPToolCache } from 'mcp-native/compat-12.7/tool-cache'
import { fixture, ROOT, waitFor } from './helpers.mjs'

let agentDir
let saved
const managers = []
beforeEach(() => {
  agentDir = mkdtempSync(join(tmpdir(), 'mcp-native-loader-'))
  saved = process.env.PI_CODING_AGENT_DIR
  process.env.PI_CODING_AGENT_DIR = agentDir
})
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
  if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR
  else process.env.PI_CODING_AGENT_DIR = saved
  rmSync(agentDir, { recursive: true, force: true })
})

const claude = { provider: 'claude', providerName: 'Claude Code', path: '/home/u/.claude.json', level: 'user' }
const configsOf =
  (configs, sources = {}) =>
  async () => ({ configs, sources, exaApiKeys: ['k1'] })
async function load(options) {
  const out = await discoverAndLoadMCPTools(ROOT, options)
  managers.push(out.manager)
  return out
}

describe('discoverAndLoadMCPTools', () => {
  it('L1: paths name the server and its provider; resolvedPath the tool', async () => {
    const out = await load({ cacheStorage: null, loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200 }) }, { gh: claude }) })
    const echo = out.tools.find((t) => t.tool.name === 'mcp_gh_echo')
    expect(echo).toEqual({ path: 'mcp:gh via Claude Code', resolvedPath: 'mcp:mcp_gh_echo', tool: echo.tool })
    expect(out.tools.length).toBe(6)
    expect(out.connectedServers).toEqual(['gh'])
    expect(out.errors).toEqual([])
    expect(out.exaApiKeys).toEqual(['k1'])
    expect(out.manager.getTools().length).toBe(6)
  })

  it('a server without a known provider gets mcp:<tool name> as its path', async () => {
    const out = await load({ cacheStorage: null, loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200 }) }) })
    expect(out.tools[0].path).toBe(`mcp:${out.tools[0].tool.name}`)
  })

  it('L2: manager errors become { path: mcp:<server>, error } in order', async () => {
    const out = await load({ cacheStorage: null, loadConfigs: configsOf({ bad: { type: 'http' }, worse: { type: 'ws' } }) })
    expect(out.errors).toEqual([
      { path: 'mcp:bad', error: 'Server "bad": http server requires "url" field' },
      { path: 'mcp:worse', error: 'Server "worse": unknown server type "ws"' },
    ])
  })

  it('L3: a discovery that throws gives one .mcp.json error and empty lists', async () => {
    const out = await load({
      cacheStorage: null,
      loadConfigs: async () => {
        throw new Error('x')
      },
    })
    expect(out).toEqual({
      manager: out.manager,
      tools: [],
      errors: [{ path: '.mcp.json', error: 'x' }],
      connectedServers: [],
      exaApiKeys: [],
    })
  })

  it('cacheStorage undefined opens the package’s own store in the agent directory; null uses none', async () => {
    await load({ cacheStorage: null, loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200 }) }) })
    expect(existsSync(join(agentDir, 'mcp-cache.db'))).toBe(false)
    await load({ loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200 }) }) })
    const db = join(agentDir, 'mcp-cache.db')
    const cache = MCPToolCache.open(db)
    try {
      // The cache write is not awaited by the load: wait until the row is there.
      const tools = await waitFor(() => cache.get('gh', fixture([], { killGraceMs: 200 })))
      expect(tools?.map((t) => t.name)).toContain('echo')
    } finally {
      cache.close()
    }
  })

  it('a given storage is used through MCPToolCache; a store that cannot open is logged and skipped', async () => {
    const rows = new Map()
    const storage = { getCache: (k) => rows.get(k) ?? null, setCache: (k, v) => rows.set(k, v) }
    await load({ cacheStorage: storage, loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200 }) }) })
    await waitFor(() => rows.has('mcp_tools:gh'))
    expect(JSON.parse(rows.get('mcp_tools:gh')).version).toBe(1)

    writeFileSync(join(agentDir, 'blocker'), 'not a directory')
    process.env.PI_CODING_AGENT_DIR = join(agentDir, 'blocker')
    const warnings = []
    const logger = { error() {}, debug() {}, warn: (...args) => warnings.push(args) }
    const out = await load({ logger, loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200 }) }) })
    expect(out.connectedServers).toEqual(['gh'])
    expect(warnings[0][0]).toBe('MCP tool cache unavailable')
    expect(typeof warnings[0][1].error).toBe('string')
  })

  it('every manager option reaches the manager (renderer, onRequest, authStorage)', async () => {
    const renderer = { renderCall: () => 'c', renderResult: () => 'r' }
    const asked = []
    const out = await load({
      cacheStorage: null,
      renderer,
      onRequest: (server, method) => {
        asked.push([server, method])
        return { roots: [] }
      },
      authStorage: { get: () => ({ type: 'oauth', access: 'tok' }) },
      loadConfigs: configsOf({ gh: fixture([], { killGraceMs: 200, env: { T: 'x' }, auth: { type: 'oauth', credentialId: 'c' } }) }),
    })
    expect(out.tools[0].tool.renderCall({}, {})).toBe('c')
    const conn = out.manager.getConnection('gh')
    await conn.transport.request('reverse', { method: 'roots/list' })
    expect(asked).toEqual([['gh', 'roots/list']])
    const prepared = await out.manager.prepareConfig(conn.config)
    expect(prepared.env.OAUTH_ACCESS_TOKEN).toBe('tok')
  })
})
