// The OAuth client (SPEC 10) through the public API: the `oauth` option of MCPClient,
// connectToServer and MCPManager against fixture/oauth-server.mjs (a protected MCP server and its
// authorization server on 127.0.0.1:0, every secret it issues marked SENTINEL). The redirect is
// completed by the test's `onAuthorize` (GET without following, return `Location`). Runs under
// vitest (Node) and `bun test` (Bun).
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import { connectToServer, createMCPManager, disconnectServer, MCPClient } from 'mcp-native/compat-12.7'
import { startOAuthServer } from './fixture/oauth-server.mjs'

const REDIRECT = 'http://127.0.0.1:9/callback'

/** `onAuthorize` as a user's app would do it without a browser: follow nothing, return `Location`. */
function authorizer() {
  const prompts = []
  const onAuthorize = async (prompt) => {
    prompts.push(prompt)
    const res = await fetch(prompt.url, { redirect: 'manual' })
    return new URL(res.headers.get('location'), prompt.url).href
  }
  return { prompts, onAuthorize }
}

/** A JS store over a Map. */
function mapStore() {
  const map = new Map()
  return { map, get: (k) => map.get(k), set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) }
}

const text = (result) => result.content[0].text
/** Polls until `get()` returns something (at most 10 s). */
async function until(get) {
  const deadline = Date.now() + 10000
  for (;;) {
    const value = get()
    if (value || Date.now() > deadline) return value
    await new Promise((r) => setTimeout(r, 20))
  }
}
/** A port nobody listens on now. */
function freePort() {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}
const noSecret = (s) => expect(String(s)).not.toContain('SENTINEL')

let server
const open = []
beforeEach(async () => {
  server = await startOAuthServer()
})
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => (c.disconnectAll ? c.disconnectAll() : c.close())))
  await server.close()
})

function client(oauth, name = 'prot') {
  const c = new MCPClient(
    name,
    { type: 'http', url: server.url, timeout: 15000 },
    { oauth: { clientName: 'tests', redirectUri: REDIRECT, ...oauth } },
  )
  open.push(c)
  return c
}

describe('the oauth option of MCPClient and connectToServer', () => {
  it('first connect: 401 → discovery → registration → authorization (onAuthorize) → connect → call', async () => {
    const { prompts, onAuthorize } = authorizer()
    const c = client({ onAuthorize })
    await c.connect()
    expect(c.serverInfo.name).toBe('oauth-fixture')
    expect(text(await c.callTool('whoami', {}))).toBe('ok whoami with mcp:read offline_access')
    expect(prompts).toHaveLength(1)
    expect(prompts[0]).toMatchObject({
      serverName: 'prot',
      serverUrl: server.url,
      scopes: ['mcp:read', 'offline_access'],
      redirectUri: REDIRECT,
    })
    const url = new URL(prompts[0].url)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(url.searchParams.get('resource')).toBe(server.url)
    expect(server.stats()).toMatchObject({ register: 1, authorize: 1, tokenCode: 1, unauthorized: 1 })
  }, 20000)

  it('a restart reuses the stored tokens: no new authorization', async () => {
    const store = mapStore()
    const first = authorizer()
    const c1 = client({ onAuthorize: first.onAuthorize, store })
    await c1.connect()
    await c1.callTool('whoami', {})
    await c1.close()
    // Tokens, registration and server binding are in the JS store (as JSON text).
    expect([...store.map.keys()].map((k) => k.split('|')[0]).sort()).toEqual(['client', 'server', 'tokens'])
    const second = authorizer()
    // The function API, as another process would connect.
    const conn = await connectToServer(
      'prot',
      { type: 'http', url: server.url, timeout: 15000 },
      {
        oauth: { clientName: 'tests', redirectUri: REDIRECT, onAuthorize: second.onAuthorize, store },
      },
    )
    try {
      expect(text(await conn.transport.request('tools/call', { name: 'whoami', arguments: {} }))).toMatch(/^ok whoami/)
    } finally {
      await disconnectServer(conn)
    }
    expect(second.prompts).toHaveLength(0)
    expect(server.stats()).toMatchObject({ register: 1, authorize: 1, unauthorized: 1 })
  }, 20000)

  it('an expired access token is refreshed', async () => {
    const { prompts, onAuthorize } = authorizer()
    const c = client({ onAuthorize })
    await c.connect()
    server.control({ expireAll: true })
    expect(text(await c.callTool('whoami', {}))).toMatch(/^ok whoami/)
    expect(server.stats()).toMatchObject({ tokenRefresh: 1, authorize: 1 })
    expect(prompts).toHaveLength(1)
  }, 20000)

  it('a revoked refresh token leads to authorization again', async () => {
    const { prompts, onAuthorize } = authorizer()
    const c = client({ onAuthorize })
    await c.connect()
    server.control({ expireAll: true, revokeRefresh: true })
    expect(text(await c.callTool('whoami', {}))).toMatch(/^ok whoami/)
    expect(server.stats()).toMatchObject({ tokenRefresh: 1, authorize: 2, register: 1 })
    expect(prompts).toHaveLength(2)
  }, 20000)

  it('a 403 insufficient_scope steps up to the union of scopes', async () => {
    const { prompts, onAuthorize } = authorizer()
    const c = client({ onAuthorize })
    await c.connect()
    expect(text(await c.callTool('write', {}))).toBe('ok write with mcp:read offline_access mcp:write')
    expect(prompts.map((p) => p.scopes.join(' '))).toEqual(['mcp:read offline_access', 'mcp:read offline_access mcp:write'])
  }, 20000)

  it('a 2026-07-28-first client authorizes on its first request (server/discover) and falls back to the server’s era', async () => {
    const { prompts, onAuthorize } = authorizer()
    const c = new MCPClient(
      'prot',
      { type: 'http', url: server.url, timeout: 15000 },
      { protocolVersion: '2026-07-28', oauth: { clientName: 'tests', redirectUri: REDIRECT, onAuthorize } },
    )
    open.push(c)
    await c.connect()
    expect(text(await c.callTool('whoami', {}))).toMatch(/^ok whoami/)
    expect(prompts).toHaveLength(1)
    expect(server.stats()).toMatchObject({ authorize: 1, unauthorized: 1 })
  }, 20000)

  it('"loopback" listens on the redirect URI and calls openUrl; "headless" follows nothing', async () => {
    const port = await freePort()
    const opened = []
    const loop = client({
      redirectUri: `http://127.0.0.1:${port}/callback`,
      onAuthorize: 'loopback',
      // The "browser": the authorization server redirects to the listener, which answers.
      openUrl: async (url) => {
        opened.push(url)
        const res = await fetch(url, { redirect: 'manual' })
        const page = await fetch(res.headers.get('location'))
        expect(page.status).toBe(200)
      },
    })
    await loop.connect()
    expect(opened).toHaveLength(1)
    expect(new URL(opened[0]).searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${port}/callback`)
    expect(text(await loop.callTool('whoami', {}))).toMatch(/^ok whoami/)
    const headless = client({ onAuthorize: 'headless' }, 'other')
    await headless.connect()
    expect(text(await headless.callTool('whoami', {}))).toMatch(/^ok whoami/)
    expect(server.stats().authorize).toBe(2)
  }, 20000)

  it('failures are MCP_OAUTH_ERROR and hold no token, secret or code', async () => {
    // A wrong iss: rejected before the token request.
    server.control({ iss: 'http://127.0.0.1:1' })
    const { onAuthorize } = authorizer()
    const err = await client({ onAuthorize })
      .connect()
      .then(
        () => null,
        (e) => e,
      )
    expect(err?.code).toBe('MCP_OAUTH_ERROR')
    expect(err.reason).toBe('iss_mismatch')
    noSecret(err.message)
    noSecret(JSON.stringify(err))
    expect(server.stats().tokenCode).toBe(0)
    server.control({ iss: null })
    // onAuthorize throws with a secret in its message: the message is not passed on.
    const thrower = client({
      onAuthorize: async (prompt) => {
        await fetch(prompt.url, { redirect: 'manual' })
        throw new Error('callback had code=SENTINEL-xyz')
      },
    })
    const thrown = await thrower.connect().then(
      () => null,
      (e) => e,
    )
    expect(thrown?.code).toBe('MCP_OAUTH_ERROR')
    noSecret(thrown.message)
    // Garbage: not a string.
    const garbage = await client({ onAuthorize: () => 42 })
      .connect()
      .then(
        () => null,
        (e) => e,
      )
    expect(garbage?.code).toBe('MCP_OAUTH_ERROR')
    expect(garbage.message).toMatch(/onAuthorize/)
  }, 20000)

  it('a store that throws or answers garbage fails or is read as empty, never crashes', async () => {
    const { onAuthorize } = authorizer()
    // get answers a number: read as "nothing stored"; set works.
    const odd = mapStore()
    const c = client({ onAuthorize, store: { ...odd, get: () => 42 } })
    await c.connect()
    expect(text(await c.callTool('whoami', {}))).toMatch(/^ok whoami/)
    // set throws (with a secret in its message): the connection fails with a store error.
    const broken = client({
      onAuthorize,
      store: {
        get: () => null,
        set: () => {
          throw new Error('disk full SENTINEL')
        },
        delete: () => {},
      },
    })
    const err = await broken.connect().then(
      () => null,
      (e) => e,
    )
    expect(err?.code).toBe('MCP_STORE_ERROR')
    noSecret(err.message)
  }, 20000)

  it('an unusable oauth option throws MCP_INVALID_CONFIG at once', () => {
    expect(
      () =>
        new MCPClient('x', { type: 'http', url: server.url }, { oauth: { clientName: 'x', redirectUri: REDIRECT, onAuthorize: 'nope' } }),
    ).toThrow(expect.objectContaining({ code: 'MCP_INVALID_CONFIG' }))
    expect(
      () =>
        new MCPClient(
          'x',
          { type: 'http', url: server.url },
          { oauth: { clientName: 'x', redirectUri: 'not a url', onAuthorize: 'headless' } },
        ),
    ).toThrow(expect.objectContaining({ code: 'MCP_INVALID_CONFIG' }))
  })
})

describe('the oauth option of MCPManager', () => {
  let dir
  let saved
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-native-oauth-'))
    saved = { HOME: process.env.HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR }
    process.env.HOME = join(dir, 'home')
    delete process.env.PI_CODING_AGENT_DIR
    mkdirSync(join(dir, 'home'), { recursive: true })
    mkdirSync(join(dir, 'cwd'), { recursive: true })
    writeFileSync(
      join(dir, 'cwd', '.mcp.json'),
      JSON.stringify({ mcpServers: { prot: { type: 'http', url: server.url, timeout: 15000 } } }),
    )
  })
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    rmSync(dir, { recursive: true, force: true })
  })

  function logger() {
    const lines = []
    const log =
      (level) =>
      (...args) =>
        lines.push(`${level} ${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`)
    return { lines, error: log('error'), warn: log('warn'), debug: log('debug') }
  }

  it('a server in .mcp.json is authorized through the callbacks; tokens go to the given store and are reused', async () => {
    const store = mapStore()
    const first = authorizer()
    const log1 = logger()
    const oauth = { clientName: 'agent', redirectUri: REDIRECT, onAuthorize: first.onAuthorize, store }
    const one = await createMCPManager(join(dir, 'cwd'), { oauth, logger: log1 })
    open.push(one.manager)
    // Connected by the start, or just after it when the authorization outlasted the startup gate
    // (a server whose user is authorizing is not awaited).
    expect([...one.result.errors]).toEqual([])
    await until(() => one.manager.getConnectedServers().includes('prot'))
    expect(first.prompts).toHaveLength(1)
    expect(first.prompts[0].serverName).toBe('prot')
    expect(one.manager.getTools().some((t) => t.name.includes('whoami'))).toBe(true)
    const keys = [...store.map.keys()]
    expect(keys.some((k) => k.startsWith('tokens|'))).toBe(true)
    await one.manager.disconnectAll()
    // The next start: the stored tokens, no authorization.
    const second = authorizer()
    const log2 = logger()
    const two = await createMCPManager(join(dir, 'cwd'), { oauth: { ...oauth, onAuthorize: second.onAuthorize }, logger: log2 })
    open.push(two.manager)
    expect(two.result.connectedServers).toEqual(['prot'])
    expect(second.prompts).toHaveLength(0)
    expect(server.stats()).toMatchObject({ authorize: 1, register: 1 })
    for (const line of [...log1.lines, ...log2.lines]) noSecret(line)
  }, 30000)

  it('a server waiting for its user is not awaited by the start; it comes up when the user is done', async () => {
    const { onAuthorize } = authorizer()
    let release
    const released = new Promise((resolve) => {
      release = resolve
    })
    const asked = []
    const statuses = []
    const oauth = {
      clientName: 'agent',
      redirectUri: REDIRECT,
      store: mapStore(),
      onAuthorize: async (prompt) => {
        asked.push(prompt.serverName)
        await released
        return onAuthorize(prompt)
      },
    }
    const { manager, result } = await createMCPManager(join(dir, 'cwd'), {
      oauth,
      logger: logger(),
      onServerStatus: (name, status) => statuses.push(`${name} ${status}`),
    })
    open.push(manager)
    // Neither connected nor failed: waiting for its user (outside the connect deadline).
    expect(asked).toEqual(['prot'])
    expect(result.connectedServers).toEqual([])
    expect([...result.errors]).toEqual([])
    expect(manager.getTools()).toEqual([])
    release()
    const deadline = Date.now() + 10000
    while (!statuses.includes('prot connected') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(statuses).toContain('prot connected')
    expect(manager.getTools().some((t) => t.name.includes('whoami'))).toBe(true)
  }, 30000)

  it('without a store, tokens go to a 0600 mcp-oauth.json in the agent directory; failures log no secret', async () => {
    const first = authorizer()
    const log = logger()
    const oauth = { clientName: 'agent', redirectUri: REDIRECT, onAuthorize: first.onAuthorize }
    const one = await createMCPManager(join(dir, 'cwd'), { oauth, logger: log })
    open.push(one.manager)
    expect([...one.result.errors]).toEqual([])
    await until(() => one.manager.getConnectedServers().includes('prot'))
    const file = join(dir, 'home', '.omp', 'agent', 'mcp-oauth.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    await one.manager.disconnectAll()
    // A failing authorization (wrong iss after the tokens are revoked): an error, no secret.
    server.control({ expireAll: true, revokeRefresh: true, iss: 'http://127.0.0.1:1' })
    const log2 = logger()
    const failures = []
    const two = await createMCPManager(join(dir, 'cwd'), {
      oauth,
      logger: log2,
      onServerStatus: (_name, _status, error) => error && failures.push(error.message),
    })
    open.push(two.manager)
    expect(two.result.connectedServers).toEqual([])
    // In the start's errors, or (the authorization outlasted the startup gate) reported later.
    const message = two.result.errors.get('prot') ?? (await until(() => failures[0]))
    expect(message).toMatch(/iss/)
    await until(() => log2.lines.some((l) => l.startsWith('error')))
    expect(log2.lines.some((l) => l.startsWith('error') && l.includes('iss'))).toBe(true)
    noSecret(message)
    for (const line of [...log.lines, ...log2.lines]) noSecret(line)
  }, 30000)
})
