// Robustness issue, "Secrets": no secret the package handles — a header value from the config, a
// token from auth storage, the output of a `!command` value — appears in an error message, an error
// property, a log line or a status callback the package produces. Every error path we can drive
// runs with sentinels in all those places; everything the package hands back is then searched for
// them. The server's own words are allowed to hold anything (stderr, the body in `HTTP <status>:
// <body>`), so the servers used here never echo what they receive: the HTTP fixture's `headers`
// method is the one route that does, and it is not used. vitest (Node) and `bun test` (Bun).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { MCPClient, MCPManager, callMCP, connectToServer, createHttpTransport, createStdioTransport } from 'mcp-native/compat-12.7'
import { ROOT, fixture, settle, startHttpFixture, waitFor } from './helpers.mjs'

// Every secret starts with PREFIX, so one search finds any of them (and any part of a `!command`
// text, which holds the prefix too); the full values say which one leaked.
const PREFIX = 'SENTINEL-7f3a'
const RUN = Math.random().toString(36).slice(2, 10)
const S = {
  header: `${PREFIX}-header-${RUN}`,
  env: `${PREFIX}-envvar-${RUN}`,
  token: `${PREFIX}-token-${RUN}`,
  command: `${PREFIX}-command-${RUN}`,
  url: `${PREFIX}-urlkey-${RUN}`,
}
// A config value naming an environment variable (SPEC 6.3), set to a secret.
const ENV_NAME = `MCP_SECRETS_TEST_${RUN.toUpperCase()}`
process.env[ENV_NAME] = S.env
// `!command` values: the output is the secret; the command text holds it only in two halves.
const half = S.command.length >> 1
const COMMAND = `!printf '%s%s' '${S.command.slice(0, half)}' '${S.command.slice(half)}'`
// Output with a line feed in the middle: an invalid header value once resolved.
const COMMAND_LF = `!printf '%s\\n%s' '${S.command.slice(0, half)}' '${S.command.slice(half)}'`
// A command that fails after printing the secret on both streams.
const COMMAND_FAILS = `!printf '%s' '${S.command.slice(0, half)}'; printf '%s' '${S.command.slice(half)}' >&2; exit 3`
const AUTH = { type: 'oauth', credentialId: 'cred-secret-test' }
const AUTH_STORAGE = { get: (id) => (id === AUTH.credentialId ? { type: 'oauth', access: S.token } : undefined) }

const secretHeaders = (extra = {}) => ({
  'X-Api-Key': S.header,
  'X-Env-Key': ENV_NAME,
  'X-Command-Key': COMMAND,
  Authorization: `Bearer ${S.header}`,
  ...extra,
})
const secretEnv = (extra = {}) => ({ API_KEY: S.header, ENV_KEY: ENV_NAME, COMMAND_KEY: COMMAND, ...extra })

// --- finding secrets in whatever the package handed back ----------------------------------------

/** Where `value` (errors walked through all own properties, stack and String(), maps, arrays,
 * objects, JSON text) holds a secret: `path: excerpt` lines. */
function findSecrets(value, path = '', found = [], seen = new Set(), depth = 0) {
  const check = (p, text) => {
    const i = text.indexOf(PREFIX)
    if (i < 0) return
    const which = Object.entries(S).find(([, v]) => text.includes(v))
    found.push(`${p}: [${which ? which[0] : 'part of a secret'}] …${text.slice(Math.max(0, i - 60), i + 60)}…`)
  }
  if (typeof value === 'string') {
    check(path, value)
    return found
  }
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    if (value !== undefined) check(path, String(value))
    return found
  }
  if (typeof value === 'function' || seen.has(value) || depth > 6) return found
  seen.add(value)
  if (value instanceof Error) {
    check(`${path} String()`, String(value))
    check(`${path}.stack`, String(value.stack ?? ''))
    for (const key of new Set([...Object.getOwnPropertyNames(value), ...Object.keys(value), 'cause'])) {
      if (key === 'stack') continue
      findSecrets(value[key], `${path}.${key}`, found, seen, depth + 1)
    }
    return found
  }
  if (value instanceof Map) {
    for (const [k, v] of value) findSecrets(v, `${path}[${String(k)}]`, found, seen, depth + 1)
    return found
  }
  for (const key of Object.keys(value)) findSecrets(value[key], `${path}.${key}`, found, seen, depth + 1)
  // And as the JSON a logger would write.
  try {
    check(
      `${path} JSON`,
      JSON.stringify(value, (_k, v) => (v instanceof Error ? { ...v, message: v.message, stack: v.stack } : v)),
    )
  } catch {
    // cyclic: walked above
  }
  return found
}

/** Everything one test collects: errors, results, log calls, status and error callbacks. */
function collector() {
  const items = []
  const add = (label, value) => items.push([label, value])
  return {
    items,
    add,
    logger: {
      error: (...args) => add('logger.error', args),
      warn: (...args) => add('logger.warn', args),
      info: (...args) => add('logger.info', args),
      debug: (...args) => add('logger.debug', args),
      log: (...args) => add('logger.log', args),
    },
    onServerStatus: (...args) => add('onServerStatus', args),
    onError: (label) => (err) => add(`${label} onError`, err),
    /** Awaits `promise`, records what it ended with; returns `{ value }` or `{ error }`. */
    async settle(label, promise) {
      const outcome = await settle(promise)
      add(label, 'error' in outcome ? outcome.error : outcome.value)
      return outcome
    },
    leaks() {
      const found = []
      for (const [label, value] of items) findSecrets(value, label, found)
      return found
    },
    count(prefix) {
      return items.filter(([l]) => l.startsWith(prefix)).length
    },
  }
}

// What the package writes to the console or the standard streams from JavaScript, per test.
const written = []
const restore = []
beforeEach(() => {
  written.length = 0
  for (const [obj, key] of [
    [console, 'log'],
    [console, 'error'],
    [console, 'warn'],
    [console, 'info'],
    [console, 'debug'],
    [process.stdout, 'write'],
    [process.stderr, 'write'],
  ]) {
    const original = obj[key]
    obj[key] = function (...args) {
      written.push([`${key}`, args.map((a) => (typeof a === 'string' ? a : a instanceof Uint8Array ? Buffer.from(a).toString() : a))])
      return original.apply(this, args)
    }
    restore.push(() => (obj[key] = original))
  }
})
afterEach(() => {
  for (const r of restore.splice(0)) r()
  const found = []
  for (const [label, args] of written) findSecrets(args, `console/${label}`, found)
  expect(found).toEqual([])
})

// --- servers ------------------------------------------------------------------------------------

/** A loopback HTTP server whose every answer is fixed text (it never echoes the request). */
async function startScripted() {
  const sockets = new Set()
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname
    req.resume()
    switch (path) {
      case '/401':
        res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="mcp"' })
        return res.end('unauthorized')
      case '/403':
        res.writeHead(403, { 'content-type': 'text/plain' })
        return res.end('forbidden')
      case '/500':
        res.writeHead(500, { 'content-type': 'text/plain' })
        return res.end('internal failure')
      case '/hang':
        return undefined
      case '/reset':
        return req.socket.destroy()
      case '/not-json':
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end('<html>not json</html>')
      case '/sse-cut':
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return res.end('data: {"jsonrpc":"2.0",')
      case '/sse-empty':
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return res.end(': nothing\n\n')
      case '/sse-hang':
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        return res.write(': wait\n\n')
      case '/rpc-error':
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"refused"}}')
      default:
        res.writeHead(404, { 'content-type': 'text/plain' })
        return res.end('no such route')
    }
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise((r) => server.close(r))
    },
  }
}

/** A loopback port with nothing listening. */
async function closedPort() {
  const s = createServer()
  await new Promise((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address()
  await new Promise((r) => s.close(r))
  return port
}

let scripted
let fx // the project's HTTP fixture
let refused
beforeAll(async () => {
  scripted = await startScripted()
  fx = await startHttpFixture()
  refused = `http://127.0.0.1:${await closedPort()}/mcp`
})
afterAll(async () => {
  fx?.child.kill()
  await scripted?.close()
  delete process.env[ENV_NAME]
})

const managers = []
const cleanups = []
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
  await Promise.all(cleanups.splice(0).map((f) => settle(f())))
})
function manage(c, options = {}, toolCache = null) {
  const m = new MCPManager(ROOT, toolCache, { logger: c.logger, onServerStatus: c.onServerStatus, ...options })
  m.setAuthStorage(AUTH_STORAGE)
  managers.push(m)
  return m
}

// --- the paths ----------------------------------------------------------------------------------

describe('secrets stay out of errors, logs and callbacks', () => {
  it('manager, HTTP servers: refused, 401/403/500/404 answers, reset, hang, bad JSON, cut SSE, invalid header values', async () => {
    const c = collector()
    const m = manage(c)
    const http = (url, extra = {}) => ({ type: 'http', url, headers: secretHeaders(), auth: AUTH, timeout: 3000, ...extra })
    const configs = {
      refused: http(refused),
      unauthorized: http(`${scripted.base}/401`),
      forbidden: http(`${scripted.base}/403`),
      failing: http(`${scripted.base}/500`),
      missing: http(`${fx.base}/no-such-path`),
      reset: http(`${scripted.base}/reset`),
      hanging: http(`${scripted.base}/hang`, { timeout: 400 }),
      sseHanging: http(`${scripted.base}/sse-hang`, { timeout: 400 }),
      notJson: http(`${scripted.base}/not-json`),
      sseCut: http(`${scripted.base}/sse-cut`),
      sseEmpty: http(`${scripted.base}/sse-empty`),
      rpcError: http(`${scripted.base}/rpc-error`),
      legacyMissing: http(`${scripted.base}/404`, { type: 'sse' }),
      crlfValue: http(`${fx.base}/mcp`, { headers: secretHeaders({ 'X-Injected': `${S.header}\r\nX-Evil: 1` }) }),
      lfFromCommand: http(`${fx.base}/mcp`, { headers: secretHeaders({ 'X-Command-Lf': COMMAND_LF }) }),
      controlChar: http(`${fx.base}/mcp`, { headers: secretHeaders({ 'X-Control': `${S.header}\u0001` }) }),
      badHeaderName: http(`${fx.base}/mcp`, { headers: secretHeaders({ 'Bad Name': S.header }) }),
    }
    const result = await m.connectServers(configs, {})
    c.add('result', result)
    c.add('result.errors', result.errors)
    expect(result.connectedServers).toEqual([])
    expect([...result.errors.keys()].sort()).toEqual(Object.keys(configs).sort())
    for (const message of result.errors.values()) expect(typeof message).toBe('string')
    expect(c.count('onServerStatus')).toBeGreaterThanOrEqual(Object.keys(configs).length * 2)
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('manager, stdio servers: spawn failures with secrets in env, refused/hung initialize, unknown version, early exit', async () => {
    const c = collector()
    const m = manage(c)
    const stdio = (flags, extra = {}) => fixture(flags, { env: secretEnv(), auth: AUTH, timeout: 3000, ...extra })
    const configs = {
      noBinary: { command: '/nonexistent/mcp-secrets-server', env: secretEnv(), auth: AUTH },
      noCwd: stdio([], { cwd: '/nonexistent/mcp-secrets-dir' }),
      nulInEnv: stdio([], { env: secretEnv({ BROKEN: `${S.header}\u0000tail` }) }),
      initError: stdio(['--init-error']),
      initHang: stdio(['--init-hang'], { timeout: 400 }),
      badVersion: stdio(['--init-version=1999-01-01']),
      exitsEarly: stdio(['--init-hang', '--exit-after-ms=100']),
      failingListing: stdio(['--pages=3', '--pages-fail-at=1']),
    }
    const result = await m.connectServers(configs, {})
    c.add('result', result)
    c.add('result.errors', result.errors)
    expect([...result.errors.keys()].sort()).toEqual(Object.keys(configs).sort())
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('manager validation errors, with secrets in the rejected configs', async () => {
    const c = collector()
    const m = manage(c)
    const configs = {
      both: { command: 'x', url: 'http://127.0.0.1:9/mcp', headers: secretHeaders(), env: secretEnv(), auth: AUTH },
      noCommand: { type: 'stdio', env: secretEnv(), auth: AUTH },
      noUrl: { type: 'http', headers: secretHeaders(), auth: AUTH },
      unknownType: { type: 'carrier-pigeon', headers: secretHeaders(), env: secretEnv(), auth: AUTH },
      notAnObject: S.header,
    }
    const result = await m.connectServers(configs, {})
    c.add('result', result)
    c.add('result.errors', result.errors)
    expect(result.errors.size).toBe(Object.keys(configs).length)
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('prepareConfig: auth storage that throws or rejects, commands that fail or print a line feed', async () => {
    const c = collector()
    const m = manage(c)
    const http = { type: 'http', url: `${fx.base}/mcp`, headers: secretHeaders({ 'X-Fails': COMMAND_FAILS }), auth: AUTH }
    const stdio = fixture([], { env: secretEnv({ FAILS: COMMAND_FAILS, LF: COMMAND_LF }), auth: AUTH })
    // The resolved config carries the secrets by design; only what else comes back is checked.
    const resolved = await m.prepareConfig(http)
    expect(resolved.headers['X-Api-Key']).toBe(S.header)
    expect(resolved.headers['X-Env-Key']).toBe(S.env)
    expect(resolved.headers['X-Command-Key']).toBe(S.command)
    expect(resolved.headers.Authorization).toBe(`Bearer ${S.token}`)
    expect(resolved.headers['X-Fails']).toBeUndefined()
    await m.prepareConfig(stdio)
    for (const storage of [
      { get: () => Promise.reject(new Error('storage locked')) },
      {
        get: () => {
          throw new Error('storage locked')
        },
      },
    ]) {
      m.setAuthStorage(storage)
      await c.settle(
        'prepareConfig(http)',
        m.prepareConfig(http).then(() => 'resolved'),
      )
      await c.settle(
        'prepareConfig(stdio)',
        m.prepareConfig(stdio).then(() => 'resolved'),
      )
    }
    // An injected resolver that fails for every value (SPEC: the logger gets a warning).
    const m2 = manage(c, { resolveConfigValue: () => Promise.reject(new Error('resolver down')) })
    await c.settle(
      'prepareConfig(resolver)',
      m2.prepareConfig(http).then(() => 'resolved'),
    )
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('tool objects: MCP error results (timeout, crash, dead HTTP server, deferred server that never comes), onError, reconnect', async () => {
    const c = collector()
    const own = await startHttpFixture()
    cleanups.push(() => own.child.kill())
    const dir = mkdtempSync(join(tmpdir(), 'mcp-secrets-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const cache = {
      get: async (name) => (name === 'deferred' ? [{ name: 'echo', inputSchema: { type: 'object' } }] : null),
      set: async () => {},
    }
    const m = manage(c, { reconnect: { maxAttempts: 2, initialDelayMs: 20, maxDelayMs: 40 } }, cache)
    const configs = {
      // Its timeout bounds the connect too: long enough for a busy machine, shorter than `slow`.
      slowStdio: fixture([], { env: secretEnv(), auth: AUTH, timeout: 1500 }),
      deadHttp: { type: 'http', url: `${own.base}/mcp`, headers: secretHeaders(), auth: AUTH, timeout: 2000 },
      // Still connecting when connectServers returns (the others are awaited): deferred tools.
      deferred: fixture(['--init-hang'], { env: secretEnv(), auth: AUTH, timeout: 4000 }),
      // Comes up, then its working directory disappears: reconnects fail, and it is given up.
      vanishing: fixture([], { env: secretEnv(), auth: AUTH, cwd: dir, timeout: 2000 }),
    }
    const result = await m.connectServers(configs, {})
    c.add('result', result)
    expect(result.connectedServers.sort()).toEqual(['deadHttp', 'slowStdio', 'vanishing'])
    const tool = (name) => m.getTools().find((t) => t.name === name)
    const exec = (label, name, params) => c.settle(label, tool(name).execute('id', params, undefined, undefined, undefined))
    // Request timeout (the server answers after 5 s, the config allows 1.5 s).
    const slow = await exec('slow', 'mcp_slowstdio_slow', { ms: 5000 })
    expect(slow.value.content[0].text).toMatch(/^MCP error: /)
    // A tool that reports an error (isError) — the server's words, checked all the same.
    await exec('fail', 'mcp_slowstdio_fail', {})
    // The deferred server never finishes its handshake: its cached tool reports the timeout.
    const deferred = await exec('deferred', 'mcp_deferred_echo', { message: 'x' })
    expect(deferred.value.content[0].text).toMatch(/^MCP error: /)
    // The HTTP server dies: calls fail with a transport error.
    const deadTool = tool('mcp_deadhttp_echo')
    own.child.kill('SIGKILL')
    await new Promise((r) => (own.child.exitCode !== null || own.child.signalCode !== null ? r() : own.child.once('exit', r)))
    const dead = await c.settle('dead', deadTool.execute('id', { message: 'x' }, undefined, undefined, undefined))
    expect(dead.value.content[0].text).toMatch(/^MCP error: /)
    // The stdio server crashes while a call is in flight, then cannot be restarted.
    const vanishing = m.getConnection('vanishing')
    const crashTool = tool('mcp_vanishing_slow')
    rmSync(dir, { recursive: true, force: true })
    const inFlight = c.settle('crash', crashTool.execute('id', { ms: 5000 }, undefined, undefined, undefined))
    await new Promise((r) => setTimeout(r, 100))
    process.kill(vanishing.transport.pid, 'SIGKILL')
    const crashed = await inFlight
    expect(crashed.value.content[0].text).toMatch(/^MCP error: /)
    await waitFor(() => m.getConnectionStatus('vanishing') === 'disconnected', 5000)
    expect(m.getConnectionStatus('vanishing')).toBe('disconnected')
    await c.settle('after give-up', crashTool.execute('id', { ms: 1 }, undefined, undefined, undefined))
    await c.settle('waitForConnection', m.waitForConnection('vanishing'))
    await c.settle('refreshServerTools', m.refreshServerTools('deadHttp'))
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('MCPClient and transports over HTTP: error answers, SSE failures, timeouts, aborts, session expiry, the GET stream', async () => {
    const c = collector()
    const headers = { 'X-Api-Key': S.header, Authorization: `Bearer ${S.token}`, 'X-Command-Output': S.command, 'X-Env-Value': S.env }
    const client = await MCPClient.connect('h', { type: 'http', url: `${fx.base}/mcp`, headers, timeout: 2000 })
    cleanups.push(() => client.close())
    client.onError = c.onError('client')
    client.onStatus = (...args) => c.add('client.onStatus', args)
    const req = (label, method, params, options) => c.settle(label, client.request(method, params, options))
    await req('http-error 401', 'http-error', {
      status: 401,
      body: 'denied',
      wwwAuthenticate: 'Bearer realm="x"',
      authServer: 'https://as',
    })
    await req('http-error 500', 'http-error', { status: 500, body: 'broken' })
    await req('rpc error', 'error', { code: -32000, message: 'nope', data: { reason: 'fixed text' } })
    await req('not-json', 'not-json')
    await req('sse-cut', 'sse-cut')
    await req('sse-no-answer', 'sse-no-answer')
    await req('sse-204', 'sse-204')
    await req('sse-drop-forever', 'sse-drop-forever')
    await req('sse-hang', 'sse-hang', {}, { timeout: 300 })
    await req('slow-headers', 'slow-headers', { ms: 2000 }, { timeout: 300 })
    await req('slow-body', 'slow-body', { ms: 2000 }, { timeout: 300 })
    const ac = new AbortController()
    const aborted = req('abort', 'sse-hang', {}, { signal: ac.signal })
    setTimeout(() => ac.abort(), 50)
    await aborted
    // Session expiry: the client re-initializes and retries; the raw transport reports it.
    await req('expire (client)', 'expire-session')
    await req('after expiry (client)', 'echo', { ok: true })
    const raw = await createHttpTransport({ type: 'http', url: `${fx.base}/mcp`, headers, timeout: 2000 })
    cleanups.push(() => raw.close())
    raw.onError = c.onError('transport')
    await c.settle(
      'raw initialize',
      raw.request('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } }),
    )
    await c.settle('raw expire', raw.request('expire-session-400'))
    await c.settle('raw after expiry', raw.request('echo', {}))
    await c.settle('raw notify fail', raw.notify('fail/notify'))
    // The GET stream: a server that keeps closing it (reconnects give up), read errors to onError.
    await c.settle('listener-mode', raw.request('listener-mode', { mode: 'close' }))
    await c.settle('listener', raw.startSSEListener())
    await c.settle('listener-mode back', raw.request('listener-mode', { mode: '405' }))
    // Invalid header values, refused connections, a dead URL, connectToServer's deadline.
    for (const [label, config] of [
      ['crlf', { headers: { ...headers, 'X-Bad': `${S.header}\r\nX-Evil: 1` } }],
      ['control', { headers: { ...headers, 'X-Bad': `${S.token}\u0001` } }],
      ['refused', { url: refused }],
      ['401 at initialize', { url: `${scripted.base}/401` }],
      ['hang at initialize', { url: `${scripted.base}/hang`, timeout: 300 }],
      ['legacy fallback refused', { url: `${scripted.base}/404`, type: 'sse' }],
    ]) {
      const config2 = { type: 'http', url: `${fx.base}/mcp`, headers, timeout: 2000, ...config }
      const t = await createHttpTransport(config2)
      t.onError = c.onError(`transport ${label}`)
      await c.settle(`transport ${label}`, t.request('echo', {}))
      await c.settle(`transport notify ${label}`, t.notify('note', {}))
      await t.close()
      await c.settle(`connectToServer ${label}`, connectToServer(label, config2))
    }
    expect(c.count('client onError') + c.count('transport')).toBeGreaterThan(0)
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('stdio transport and client: spawn failures with secrets in env, crash with stderr, timeouts, aborts', async () => {
    const c = collector()
    const env = { API_KEY: S.header, OAUTH_ACCESS_TOKEN: S.token, COMMAND_OUTPUT: S.command, ENV_VALUE: S.env }
    for (const [label, config] of [
      ['no binary', { command: '/nonexistent/mcp-secrets-server', env }],
      ['nul in env', fixture([], { env: { ...env, BROKEN: `${S.token}\u0000x` } })],
      ['no cwd', fixture([], { env, cwd: '/nonexistent/mcp-secrets-dir' })],
    ]) {
      await c.settle(`createStdioTransport ${label}`, createStdioTransport(config))
      await c.settle(`connectToServer ${label}`, connectToServer(label, config))
    }
    const client = await MCPClient.connect('s', fixture([], { env, timeout: 2000, maxMessageBytes: 1024 }))
    cleanups.push(() => client.close())
    client.onError = c.onError('client')
    client.onStatus = (...args) => c.add('client.onStatus', args)
    await c.settle('timeout', client.request('no-reply', {}, { timeout: 200 }))
    const ac = new AbortController()
    const aborted = c.settle('abort', client.request('no-reply', {}, { signal: ac.signal }))
    ac.abort()
    await aborted
    await c.settle('rpc error', client.request('error', { code: -32602, message: 'bad params' }))
    await c.settle('oversized', client.request('big', { bytes: 4096 }, { timeout: 2000 }))
    await c.settle('crash', client.request('crash', { code: 3, stderr: 'fixture: crashed on purpose\n' }))
    await c.settle('after crash', client.request('echo', {}))
    expect(c.count('crash')).toBe(1)
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('callMCP: refused, error statuses, timeout, abort, invalid header values', async () => {
    const c = collector()
    const headers = { Authorization: `Bearer ${S.token}`, 'X-Api-Key': S.header }
    await c.settle('refused', callMCP(refused, 'echo', {}, { headers, timeout: 2000 }))
    await c.settle('401', callMCP(`${scripted.base}/401`, 'echo', {}, { headers, timeout: 2000 }))
    await c.settle('500', callMCP(`${scripted.base}/500`, 'echo', {}, { headers, timeout: 2000 }))
    await c.settle('not json', callMCP(`${scripted.base}/not-json`, 'echo', {}, { headers, timeout: 2000 }))
    await c.settle('timeout', callMCP(`${scripted.base}/hang`, 'echo', {}, { headers, timeout: 200 }))
    const ac = new AbortController()
    const aborted = c.settle('abort', callMCP(`${scripted.base}/hang`, 'echo', {}, { headers, signal: ac.signal }))
    setTimeout(() => ac.abort(), 50)
    await aborted
    await c.settle(
      'control char',
      callMCP(`${fx.base}/mcp`, 'echo', {}, { headers: { ...headers, 'X-Bad': `${S.header}\u0001` }, timeout: 2000 }),
    )
    await c.settle(
      'crlf',
      callMCP(`${fx.base}/mcp`, 'echo', {}, { headers: { ...headers, 'X-Bad': `${S.header}\r\nX-Evil: 1` }, timeout: 2000 }),
    )
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('an API key in the URL query (the Exa way) stays out of error messages and logs', async () => {
    const c = collector()
    const m = manage(c)
    const url = (base) => `${base}?exaApiKey=${S.url}`
    const configs = {
      refused: { type: 'http', url: url(refused), timeout: 2000 },
      hanging: { type: 'http', url: url(`${scripted.base}/hang`), timeout: 300 },
      unauthorized: { type: 'http', url: url(`${scripted.base}/401`), timeout: 2000 },
    }
    const result = await m.connectServers(configs, {})
    c.add('result.errors', result.errors)
    expect(result.errors.size).toBe(3)
    await c.settle('callMCP refused', callMCP(url(refused), 'echo', {}, { timeout: 2000 }))
    expect(c.leaks()).toEqual([])
  }, 30000)

  it('nothing the package writes to stdout/stderr (native code included) holds a secret', async () => {
    // The same kinds of paths in a child process of this runtime, whose every output byte is read.
    const child = spawn(process.execPath, [join(ROOT, '__test__', 'fixture', 'secret-paths.mjs')], {
      cwd: ROOT,
      env: { ...process.env, SECRET_PATHS_SECRET: S.header, SECRET_PATHS_REFUSED: refused, SECRET_PATHS_HANG: `${scripted.base}/hang` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000)
    const code = await new Promise((r) => child.on('close', r))
    clearTimeout(timer)
    expect(out).toContain('secret-paths: done')
    expect(code).toBe(0)
    expect(findSecrets(out, 'child output')).toEqual([])
  }, 30000)
})
