// The agent's auth refresh hook (18.3.4, SPEC 11.4 "Auth hooks"): `HttpTransport.onAuthError` → new
// headers → one retry, never after an accepted SSE stream; and the root manager's wiring of it to
// the agent's managed credentials (`prepareConfig` with `forceRefresh`). Against a small MCP server
// on loopback that refuses every request without the token it currently accepts (Streamable HTTP,
// and the legacy HTTP+SSE protocol on /sse). The root's transports fail with 18.3.4's errors, the
// package's as `cause`. vitest (Node) and `bun test` (Bun).
import { createServer } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native'
import { createHttpTransport } from 'mcp-native/transports'
import { createSseTransport } from 'mcp-native/transports/sse'
import { configureMCP } from 'mcp-native/configure'
import { ROOT } from './helpers.mjs'

const T = 15000

/** A promise and its resolve. */
function deferred() {
  let resolve
  const promise = new Promise((r) => {
    resolve = r
  })
  return { promise, resolve }
}

// The server's state, reset before each test.
let accepted // the Authorization value it accepts now
let refusal // the status of a refusal: 401 or 403
let seen // [method, authorization, x-extra] of every POST, in order
let resumes = [] // the authorization of every resumption GET, in order
let onRefused // called after each refusal
let legacyStream // the open legacy GET stream
let base

const server = createServer((req, res) => {
  let body = ''
  req.on('data', (chunk) => {
    body += chunk
  })
  req.on('end', () => {
    const auth = req.headers.authorization ?? null
    const url = new URL(req.url, 'http://x')
    if (req.method === 'DELETE') return res.writeHead(200).end()
    if (req.method === 'GET' && url.pathname === '/sse') {
      // The legacy protocol: the stream names the endpoint; answers come on it.
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: endpoint\ndata: /messages\n\n')
      legacyStream = res
      return
    }
    if (req.method === 'GET') {
      // A resumption (Last-Event-ID) is refused, whatever it carries; the GET listener gets 405.
      if (req.headers['last-event-id']) {
        resumes.push(auth)
        return res.writeHead(401, { 'www-authenticate': 'Bearer' }).end('resume refused')
      }
      return res.writeHead(405).end()
    }
    const msg = JSON.parse(body)
    seen.push([msg.method, auth, req.headers['x-extra'] ?? null])
    if (msg.method !== 'initialize' && auth !== accepted) {
      res.writeHead(refusal, { 'www-authenticate': 'Bearer error="invalid_token"' }).end('token expired')
      onRefused?.()
      return
    }
    if (msg.method === 'sse-accept') {
      // Accepted: an SSE reply with an event id, cut before the answer (its resumption is refused).
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end('id: e1\nretry: 5\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n')
      return
    }
    const result =
      msg.method === 'initialize'
        ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'auth', version: '1' } }
        : msg.method === 'tools/list'
          ? { tools: [{ name: 'whoami', inputSchema: { type: 'object', properties: {} } }] }
          : msg.method === 'tools/call'
            ? { content: [{ type: 'text', text: String(auth) }] }
            : { auth }
    const answer = msg.id === undefined ? null : JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })
    if (url.pathname === '/messages') {
      res.writeHead(202).end()
      if (answer) legacyStream?.write(`event: message\ndata: ${answer}\n\n`)
      return
    }
    if (!answer) return res.writeHead(202).end()
    res.writeHead(200, { 'content-type': 'application/json' }).end(answer)
  })
})

beforeAll(async () => {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${server.address().port}`
})
afterAll(async () => {
  legacyStream?.end()
  server.closeAllConnections?.()
  await new Promise((resolve) => server.close(resolve))
})

const open = []
const managers = []
afterEach(async () => {
  configureMCP({ lookupMcpOAuthCredential: undefined, refreshStoredManagedMcpOAuthCredential: undefined })
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
  await Promise.all(open.splice(0).map((t) => t.close()))
  onRefused = undefined
})

/**
 * A connected, initialized transport with `Authorization: Bearer old` (and X-Extra) configured;
 * from now on the server accepts only `Bearer new`. `calls` counts onAuthError's calls; `errors`
 * collects what onError heard.
 */
async function refused(onAuthError, { status = 401, timeout, make = createHttpTransport, path = '/mcp' } = {}) {
  accepted = 'Bearer old'
  refusal = status
  seen = []
  const t = await make({ type: 'http', url: `${base}${path}`, headers: { Authorization: 'Bearer old', 'X-Extra': 'configured' }, timeout })
  open.push(t)
  await t.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } })
  accepted = 'Bearer new'
  seen = []
  const state = { t, calls: 0, errors: [] }
  t.onError = (e) => state.errors.push(e.message)
  if (onAuthError) {
    t.onAuthError = (...args) => {
      state.calls++
      return onAuthError(...args)
    }
  }
  return state
}

describe('HttpTransport.onAuthError (18.3.4)', () => {
  it(
    'a request refused with 401: onAuthError once, its headers replace the configured ones, the request sent once more and later ones with them',
    async () => {
      const s = await refused(async () => ({ Authorization: 'Bearer new' }))
      expect(await s.t.request('whoami')).toEqual({ auth: 'Bearer new' })
      expect(seen).toEqual([
        ['whoami', 'Bearer old', 'configured'],
        ['whoami', 'Bearer new', null],
      ])
      expect(s.t.config.headers).toEqual({ Authorization: 'Bearer new' })
      expect(await s.t.request('whoami')).toEqual({ auth: 'Bearer new' })
      expect(s.calls).toBe(1)
      expect(s.errors).toEqual([])
    },
    T,
  )

  it(
    'a notification refused with 401: onAuthError, then the POST once more with the new headers',
    async () => {
      const s = await refused(async () => ({ Authorization: 'Bearer new' }))
      await s.t.notify('notifications/initialized')
      expect(seen).toEqual([
        ['notifications/initialized', 'Bearer old', 'configured'],
        ['notifications/initialized', 'Bearer new', null],
      ])
      expect(s.calls).toBe(1)
    },
    T,
  )

  it(
    '403 too; a second refusal is final (thrown, onAuthError asked once, no loop)',
    async () => {
      const s = await refused(async () => ({ Authorization: 'Bearer still-wrong' }), { status: 403 })
      const err = await s.t.request('whoami').catch((e) => e)
      expect(err).toMatchObject({ name: 'MCPTransportError', code: 403, status: 403, cause: { code: 'MCP_HTTP_ERROR' } })
      expect(s.calls).toBe(1)
      expect(seen.map(([, auth]) => auth)).toEqual(['Bearer old', 'Bearer still-wrong'])
      const note = await s.t.notify('notifications/initialized').catch((e) => e)
      expect(note).toMatchObject({ name: 'MCPTransportError', code: 403, status: 403, cause: { code: 'MCP_HTTP_ERROR' } })
      expect(s.calls).toBe(2)
    },
    T,
  )

  it(
    'a callback that returns null, throws, rejects, answers something else or never answers: the 401 as it was, no retry, no hang',
    async () => {
      const hooks = {
        null: async () => null,
        undefined: () => undefined,
        throws: () => {
          throw new Error('refresh exploded')
        },
        rejects: async () => {
          throw new Error('token endpoint down')
        },
        'not headers': async () => ({ Authorization: 42 }),
        array: async () => [['Authorization', 'Bearer new']],
        never: () => new Promise(() => {}),
      }
      const heard = {}
      for (const [name, hook] of Object.entries(hooks)) {
        const s = await refused(hook, { timeout: 300 })
        const err = await s.t.request('whoami').catch((e) => e)
        expect(err, name).toMatchObject({ name: 'MCPTransportError', code: 401, status: 401, cause: { code: 'MCP_HTTP_ERROR' } })
        expect(err.message, name).toMatch(/^HTTP 401: token expired/)
        expect(s.calls, name).toBe(1)
        expect(seen.length, name).toBe(1)
        heard[name] = s.errors
      }
      expect(heard).toEqual({
        null: [],
        undefined: [],
        throws: ['refresh exploded'],
        rejects: ['token endpoint down'],
        'not headers': ['onAuthError must resolve to an object of strings or null'],
        array: ['onAuthError must resolve to an object of strings or null'],
        never: ['onAuthError did not answer within 300ms'],
      })
    },
    T,
  )

  it(
    'headers the config would refuse (a value with CR/LF): refused naming the header only, the 401 thrown, the old headers kept',
    async () => {
      const s = await refused(async () => ({ Authorization: 'Bearer new\r\nX-Injected: yes' }))
      const err = await s.t.request('whoami').catch((e) => e)
      expect(err).toMatchObject({ name: 'MCPTransportError', code: 401, status: 401, cause: { code: 'MCP_HTTP_ERROR' } })
      expect(s.errors).toEqual(['Invalid config: header "Authorization" contains CR or LF'])
      expect(s.t.config.headers.Authorization).toBe('Bearer old')
      s.t.onAuthError = undefined
      await expect(s.t.request('whoami')).rejects.toMatchObject({ status: 401 })
      expect(seen.map(([, auth]) => auth)).toEqual(['Bearer old', 'Bearer old'])
    },
    T,
  )

  it(
    'a burst of refusals shares one onAuthError call, and every request is sent once more',
    async () => {
      const burst = 5
      const allRefused = deferred()
      let refusals = 0
      onRefused = () => {
        if (++refusals === burst) allRefused.resolve()
      }
      // The call answers once every request of the burst was refused (all of them wait on it).
      const s = await refused(async () => {
        await allRefused.promise
        return { Authorization: 'Bearer new' }
      })
      const answers = await Promise.all(Array.from({ length: burst }, () => s.t.request('whoami')))
      expect(answers).toEqual(Array.from({ length: burst }, () => ({ auth: 'Bearer new' })))
      expect(s.calls).toBe(1)
      expect(seen.filter(([, auth]) => auth === 'Bearer new')).toHaveLength(burst)
    },
    T,
  )

  it(
    'an abort while onAuthError runs rejects with the reason at once; the headers still apply for the next request',
    async () => {
      const answer = deferred()
      const asked = deferred()
      const s = await refused(() => {
        asked.resolve()
        return answer.promise
      })
      const controller = new AbortController()
      const pending = s.t.request('whoami', {}, { signal: controller.signal })
      await asked.promise
      controller.abort(new Error('user cancelled'))
      await expect(pending).rejects.toThrow('user cancelled')
      answer.resolve({ Authorization: 'Bearer new' })
      // Made before the headers arrived, refused, then sent with them (no second call).
      await expect(s.t.request('whoami')).resolves.toEqual({ auth: 'Bearer new' })
      expect(s.calls).toBe(1)
    },
    T,
  )

  it(
    'never after an accepted SSE stream: a resumption refused with 401 asks onAuthError once and is made once more; refused again, the request fails as 18.3.4 words it and is not sent again',
    async () => {
      const s = await refused(async () => ({ Authorization: 'Bearer other' }))
      accepted = 'Bearer old'
      resumes = []
      const err = await s.t.request('sse-accept').catch((e) => e)
      expect(err.message).toBe('HTTP 401 resuming MCP SSE stream: resume refused')
      // 18.3.4's SSEResumeError, not an HTTP status (nothing sends the accepted request again).
      expect(err.constructor.name).toBe('SSEResumeError')
      expect(err.cause.code).toBe('MCP_IO_ERROR')
      expect(s.calls).toBe(1)
      expect(resumes).toEqual(['Bearer old', 'Bearer other'])
      expect(seen.map(([method]) => method)).toEqual(['sse-accept'])
    },
    T,
  )

  it(
    'a refused resumption whose onAuthError gives no headers: "auth refresh failed", one resumption, the request not sent again',
    async () => {
      const s = await refused(async () => null)
      accepted = 'Bearer old'
      resumes = []
      const err = await s.t.request('sse-accept').catch((e) => e)
      expect(err.message).toBe('HTTP 401 resuming MCP SSE stream: auth refresh failed')
      expect(s.calls).toBe(1)
      expect(resumes).toEqual(['Bearer old'])
      expect(seen.map(([method]) => method)).toEqual(['sse-accept'])
    },
    T,
  )

  it(
    'without onAuthError a refused resumption fails at once with its status and text',
    async () => {
      const s = await refused(undefined)
      accepted = 'Bearer old'
      resumes = []
      const err = await s.t.request('sse-accept').catch((e) => e)
      expect(err.message).toBe('HTTP 401 resuming MCP SSE stream: resume refused')
      expect(resumes).toEqual(['Bearer old'])
      expect(seen.map(([method]) => method)).toEqual(['sse-accept'])
    },
    T,
  )

  it(
    'the legacy HTTP+SSE transport (type "sse") has it too',
    async () => {
      const s = await refused(async () => ({ Authorization: 'Bearer new' }), { make: createSseTransport, path: '/sse' })
      expect(await s.t.request('whoami')).toEqual({ auth: 'Bearer new' })
      expect(seen.map(([, auth]) => auth)).toEqual(['Bearer old', 'Bearer new'])
      expect(s.calls).toBe(1)
    },
    T,
  )
})

describe('the root manager wires it to the agent’s managed credentials (18.3.4)', () => {
  it(
    'a tool call survives an expired token: refused, refreshed with forceRefresh, sent once more',
    async () => {
      accepted = 'Bearer t1'
      refusal = 401
      seen = []
      const storage = { name: 'agent storage' }
      const refreshes = []
      let current = 't1'
      configureMCP({
        lookupMcpOAuthCredential: (s, config) =>
          s === storage && config.auth?.credentialId ? { credentialId: config.auth.credentialId } : undefined,
        refreshStoredManagedMcpOAuthCredential: async (_s, id, opts) => {
          refreshes.push([id, opts.forceRefresh === true])
          if (opts.forceRefresh) current = 't2'
          return { credential: { access: current } }
        },
      })
      const m = new MCPManager(ROOT, null)
      managers.push(m)
      m.setAuthStorage(storage)
      const config = { type: 'http', url: `${base}/mcp`, auth: { type: 'oauth', credentialId: 'cred' } }
      await m.connectServers(
        { managed: config, plain: { type: 'http', url: `${base}/mcp`, headers: { Authorization: 'Bearer t1' } } },
        {},
        undefined,
        0,
      )
      expect(typeof m.getConnection('managed').transport.onAuthError).toBe('function')
      expect(m.getConnection('plain').transport.onAuthError).toBeUndefined()
      expect(refreshes).toEqual([['cred', false]])
      // The token expires: the server accepts only the refreshed one.
      accepted = 'Bearer t2'
      seen = []
      const whoami = m.getTools().find((t) => t.name === 'mcp__managed_whoami')
      const out = await whoami.execute('c', {})
      expect(out.content[0].text).toBe('Bearer t2')
      expect(refreshes).toEqual([
        ['cred', false],
        ['cred', true],
      ])
      expect(seen.map(([method, auth]) => [method, auth])).toEqual([
        ['tools/call', 'Bearer t1'],
        ['tools/call', 'Bearer t2'],
      ])
      // A server whose credential the agent does not manage: its 401 as it was.
      const plain = m.getTools().find((t) => t.name === 'mcp__plain_whoami')
      const failed = await plain.execute('c', {})
      expect(failed.content[0].text).toMatch(/401/)
      expect(refreshes).toHaveLength(2)
      // After a reconnect the new connection is wired again.
      await m.reconnectServer('managed')
      expect(typeof m.getConnection('managed').transport.onAuthError).toBe('function')
    },
    T,
  )
})
