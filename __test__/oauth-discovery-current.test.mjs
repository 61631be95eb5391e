// SPEC 11.3: mcp-native/oauth-discovery as the agent ships it today (18.3.4 `oauth-discovery.ts`):
// the error analysis with the challenge's hints, RFC 9728 / RFC 8414 / OpenID discovery through
// `fetch` in the agent's order, and the package's fixes kept (deadlines, bounded documents, no
// endless recursion). 12.7's forms stay at mcp-native/compat-12.7/oauth-discovery (oauth.test.mjs).
// Against loopback HTTP servers on 127.0.0.1; vitest (Node) and `bun test` (Bun).
import { createServer } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'

import { connectToServer } from 'mcp-native/client'
import * as compat from 'mcp-native/compat-12.7/oauth-discovery'
import * as root from 'mcp-native/oauth-discovery'
import { startOAuthServer } from './fixture/oauth-server.mjs'
import { settle, waitFor } from './helpers.mjs'
import { json, silent, startStub } from './oauth-stub.mjs'

const {
  analyzeAuthError,
  buildWellKnownUrls,
  discoverOAuthEndpoints,
  extractMcpAuthServerUrl,
  extractOAuthChallengeScopes,
  extractOAuthEndpoints,
  fetchResourceMetadataScopes,
  rfc9728ProtectedResourceMetadataUrl,
} = root

const OAUTH = 'Server requires OAuth authentication. Launching authorization flow...'
const APIKEY = 'Server requires API key authentication.'
const UNKNOWN = 'Server requires authentication but type could not be determined.'

const AS = '/.well-known/oauth-authorization-server'
const OIDC = '/.well-known/openid-configuration'
const PR = '/.well-known/oauth-protected-resource'

/** The GETs of a discovery that finds nothing on `<base>/mcp` itself (the resource fallback). */
const RESOURCE_ORDER = [
  `${PR}/mcp`,
  `/mcp${PR}`,
  PR,
  `${AS}/mcp`,
  `/mcp${AS}`,
  AS,
  `${OIDC}/mcp`,
  `/mcp${OIDC}`,
  OIDC,
  '/mcp/oauth/metadata',
  '/oauth/metadata',
  '/mcp/.mcp/auth',
  '/.mcp/auth',
  '/mcp/authorize',
  '/authorize',
]

const stubs = []
/** The OAuth tests' stub (oauth-stub.mjs), whose requests tell when the client dropped them. */
async function stub(routes) {
  const s = await startStub(routes)
  stubs.push(s)
  return s
}
/**
 * A metadata server on 127.0.0.1:0: `routes` by "METHOD /path" (query aside), 404 otherwise; every
 * request recorded in order. (For many requests over one kept-alive connection.)
 */
async function serve(routes) {
  const requests = []
  const sockets = new Set()
  const server = createServer((req, res) => {
    requests.push({ method: req.method, path: req.url, headers: req.headers })
    req.resume()
    const route = routes[`${req.method} ${req.url.split('?')[0]}`]
    if (route) return route(req, res)
    res.writeHead(404, { 'Content-Type': 'text/plain' })
    res.end('not found')
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const s = {
    base: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
  stubs.push(s)
  return s
}
afterEach(async () => {
  await Promise.all(stubs.splice(0).map((s) => s.close()))
})

/** The GET paths a stub saw, in order. */
const gets = (s) => s.requests.filter((r) => r.method === 'GET').map((r) => r.path)

/** A namespace's own names (not the CommonJS interop keys `default` and `module.exports`), sorted. */
const names = (ns) =>
  Object.keys(ns)
    .filter((k) => k !== 'default' && k !== 'module.exports')
    .sort()

describe('exports', () => {
  it('the 18.3.4 names at the root; 12.7 keeps its objects where the two conflict', () => {
    expect(names(root)).toEqual([
      'analyzeAuthError',
      'buildWellKnownUrls',
      'detectAuthError',
      'discoverOAuthEndpoints',
      'extractMcpAuthServerUrl',
      'extractOAuthChallengeScopes',
      'extractOAuthEndpoints',
      'fetchResourceMetadataScopes',
      'rfc9728ProtectedResourceMetadataUrl',
    ])
    for (const name of ['analyzeAuthError', 'extractOAuthEndpoints', 'discoverOAuthEndpoints']) {
      expect(typeof compat[name]).toBe('function')
      expect(compat[name]).not.toBe(root[name])
    }
    expect(compat.detectAuthError).toBe(root.detectAuthError)
    expect(compat.buildWellKnownUrls).toBeUndefined()
  })
})

describe('error analysis', () => {
  it('an auth failure as the agent classifies it: text, status fields and causes (12.7: the message markers)', () => {
    const cases = [
      // [error, root: auth?, 12.7: auth?]
      [new Error('HTTP 401: Unauthorized'), true, true],
      [new Error('Connection refused'), false, false],
      [new Error('HTTP 500: boom'), false, false],
      [new Error('failed on port 4010'), false, true],
      [new Error('Authentication error'), true, false],
      [new Error('no api key'), true, false],
      [new Error('auth unavailable'), true, false],
      [new Error('error401'), true, true],
      [Object.assign(new Error('Request rejected'), { status: 401 }), true, false],
      [Object.assign(new Error('Request rejected'), { response: { status: 403 } }), true, false],
      [Object.assign(new Error('Request rejected'), { status: 500 }), false, false],
      [new Error('connect failed', { cause: new Error('HTTP 403: Forbidden') }), true, false],
      [new Error('connect failed', { cause: { statusCode: 401 } }), true, false],
    ]
    for (const [error, rootAuth, compatAuth] of cases) {
      expect([error.message, analyzeAuthError(error).requiresAuth]).toEqual([error.message, rootAuth])
      expect([error.message, compat.analyzeAuthError(error).requiresAuth]).toEqual([error.message, compatAuth])
    }
    expect(analyzeAuthError(new Error('Connection refused'), 'https://srv.example/mcp')).toStrictEqual({ requiresAuth: false })
  })

  it('the challenge hints: Mcp-Auth-Server resolved, resource_metadata, the first non-blank scope', () => {
    const error = new Error(
      'HTTP 401: Unauthorized [WWW-Authenticate: Bearer resource_metadata="https://a/r", scope="  ", scopes="x"; Mcp-Auth-Server: /auth]',
    )
    expect(analyzeAuthError(error, 'https://srv.example/a/mcp/')).toStrictEqual({
      requiresAuth: true,
      authType: 'apikey',
      authServerUrl: 'https://srv.example/auth',
      resourceMetadataUrl: 'https://a/r',
      scopes: 'x',
      message: APIKEY,
    })
    // Without resource_metadata: RFC 9728's URL for the server URL; without a server URL, none.
    const bare = new Error('HTTP 401: Unauthorized')
    expect(analyzeAuthError(bare, 'https://srv.example/a/mcp/')).toStrictEqual({
      requiresAuth: true,
      authType: 'unknown',
      authServerUrl: undefined,
      resourceMetadataUrl: 'https://srv.example/.well-known/oauth-protected-resource/a/mcp',
      scopes: undefined,
      message: UNKNOWN,
    })
    expect(analyzeAuthError(bare).resourceMetadataUrl).toBeUndefined()

    expect(extractMcpAuthServerUrl(new Error('HTTP 401 [mcp-auth-server: https://as.example/t]'))).toBe('https://as.example/t')
    expect(extractMcpAuthServerUrl(new Error('HTTP 401 [Mcp-Auth-Server: /t]'))).toBeUndefined()
    expect(extractMcpAuthServerUrl(new Error('HTTP 401'), 'https://srv.example/')).toBeUndefined()
    expect(extractOAuthChallengeScopes(new Error('Bearer SCOPE="a b" scope="c"'))).toBe('a b')
    expect(extractOAuthChallengeScopes(new Error('Bearer scope=" " error="insufficient_scope"'))).toBeUndefined()
  })

  it('endpoints in a JSON body carry issuer, registration and resource; the challenge scope fills missing scopes', () => {
    const error = new Error(
      'HTTP 401: {"authorization_endpoint":"https://a/x","token_endpoint":"https://a/t","issuer":"https://a","registration_endpoint":"https://a/reg","resource":"https://m/mcp"} [WWW-Authenticate: Bearer scope="s1 s2"]',
    )
    const endpoints = {
      authorizationUrl: 'https://a/x',
      tokenUrl: 'https://a/t',
      issuerUrl: 'https://a',
      registrationUrl: 'https://a/reg',
      clientId: undefined,
      scopes: undefined,
      resource: 'https://m/mcp',
    }
    expect(extractOAuthEndpoints(error)).toStrictEqual(endpoints)
    expect(analyzeAuthError(error)).toStrictEqual({
      requiresAuth: true,
      authType: 'oauth',
      oauth: { ...endpoints, scopes: 's1 s2' },
      authServerUrl: undefined,
      resourceMetadataUrl: undefined,
      scopes: 's1 s2',
      message: OAUTH,
    })
    // 12.7: the four fields only.
    expect(compat.extractOAuthEndpoints(error)).toStrictEqual({
      authorizationUrl: 'https://a/x',
      tokenUrl: 'https://a/t',
      clientId: undefined,
      scopes: undefined,
    })
    // `issuer ?? issuer_url`: a blank issuer is none; a null one gives way.
    const blank = new Error('401 {"authorization_endpoint":"x","token_endpoint":"t","issuer":"  ","issuer_url":"https://i"}')
    const nul = new Error('401 {"authorization_endpoint":"x","token_endpoint":"t","issuer":null,"issuer_url":"https://i"}')
    expect(extractOAuthEndpoints(blank).issuerUrl).toBeUndefined()
    expect(extractOAuthEndpoints(nul).issuerUrl).toBe('https://i')
  })

  it('challenge pairs and the realm fallback', () => {
    const pairs = new Error(
      'Authentication required: Bearer authorization_uri="https://a/x" Token_Endpoint="https://a/t" scope="a b" issuer="https://i" registration_uri="https://r" resource_uri="https://res"',
    )
    expect(extractOAuthEndpoints(pairs)).toStrictEqual({
      authorizationUrl: 'https://a/x',
      tokenUrl: 'https://a/t',
      issuerUrl: 'https://i',
      registrationUrl: 'https://r',
      clientId: undefined,
      scopes: 'a b',
      resource: 'https://res',
    })
    const realm = new Error('HTTP 401: Bearer xrealm="https://a/x?scope=q" token_url="https://a/t"')
    expect(extractOAuthEndpoints(realm)).toStrictEqual({
      authorizationUrl: 'https://a/x?scope=q',
      tokenUrl: 'https://a/t',
      clientId: undefined,
      scopes: 'q',
    })
    expect(extractOAuthEndpoints(new Error('HTTP 401: nothing here'))).toBeNull()
  })

  it('a JWT 401 is OAuth, not an API key (12.7: apikey)', () => {
    const error = new Error('HTTP 401: {"error":"invalid JWT token"}')
    expect(analyzeAuthError(error)).toStrictEqual({
      requiresAuth: true,
      authType: 'oauth',
      authServerUrl: undefined,
      resourceMetadataUrl: undefined,
      scopes: undefined,
      message: OAUTH,
    })
    expect(compat.analyzeAuthError(error).authType).toBe('apikey')
  })

  it('[fix] a thrown value without a string message reads as empty text, not a TypeError', () => {
    expect(analyzeAuthError({ status: 401 }, 'https://srv.example/mcp')).toStrictEqual({
      requiresAuth: true,
      authType: 'unknown',
      authServerUrl: undefined,
      resourceMetadataUrl: 'https://srv.example/.well-known/oauth-protected-resource/mcp',
      scopes: undefined,
      message: UNKNOWN,
    })
    expect(extractOAuthEndpoints({})).toBeNull()
    expect(extractMcpAuthServerUrl(undefined)).toBeUndefined()
  })
})

describe('well-known URLs', () => {
  it('rfc9728ProtectedResourceMetadataUrl inserts the well-known path before the resource path', () => {
    expect(rfc9728ProtectedResourceMetadataUrl('https://h:8443/a/b//?q=1#f')).toBe(
      'https://h:8443/.well-known/oauth-protected-resource/a/b',
    )
    expect(rfc9728ProtectedResourceMetadataUrl('https://h/')).toBe('https://h/.well-known/oauth-protected-resource')
    expect(rfc9728ProtectedResourceMetadataUrl(undefined)).toBeUndefined()
    expect(rfc9728ProtectedResourceMetadataUrl('')).toBeUndefined()
    expect(rfc9728ProtectedResourceMetadataUrl('not a url')).toBeUndefined()
  })

  it('buildWellKnownUrls: the candidates in the agent order, each once', () => {
    const hrefs = (...args) => buildWellKnownUrls(...args).map((u) => u.href)
    expect(buildWellKnownUrls(AS, 'https://h', true)[0]).toBeInstanceOf(URL)
    expect(hrefs(AS, 'https://h', true)).toEqual([`https://h${AS}`])
    // An issuer with a path: RFC 8414's inserted form first; OpenID's appended form first.
    expect(hrefs(AS, 'https://h/tenant', true)).toEqual([`https://h${AS}/tenant`, `https://h/tenant${AS}`, `https://h${AS}`])
    expect(hrefs(OIDC, 'https://h/tenant/', true)).toEqual([`https://h/tenant${OIDC}`, `https://h${OIDC}/tenant`, `https://h${OIDC}`])
    expect(hrefs(AS, 'https://h/a/mcp', true)).toEqual([
      `https://h${AS}/a/mcp`,
      `https://h/a${AS}`,
      `https://h/a/mcp${AS}`,
      `https://h${AS}`,
    ])
    // A resource: RFC 9728's inserted form, the parent, the origin.
    expect(hrefs(PR, 'https://h/a/mcp?x=1', false)).toEqual([`https://h${PR}/a/mcp`, `https://h/a${PR}`, `https://h${PR}`])
    // Other paths: under the parent, then at the origin.
    expect(hrefs('/oauth/metadata', 'https://h/a/mcp', false)).toEqual(['https://h/a/oauth/metadata', 'https://h/oauth/metadata'])
    expect(hrefs('/authorize', 'https://h/mcp', true)).toEqual(['https://h/mcp/authorize', 'https://h/authorize'])
    expect(hrefs('relative/x', 'https://h/a/b', true)).toEqual(['https://h/a/relative/x'])
    expect(hrefs(AS, 'not a url', true)).toEqual([])
  })
})

describe('discoverOAuthEndpoints (18.3.4 order, real HTTP)', () => {
  it('nothing published: the server URL probed as a resource, 15 GETs in order, then null', async () => {
    const s = await serve({})
    expect(await discoverOAuthEndpoints(`${s.base}/mcp`)).toBeNull()
    expect(gets(s)).toEqual(RESOURCE_ORDER)
    for (const r of s.requests) expect(r.headers.accept).toBe('application/json')
  }, 10000)

  it('RFC 9728 chain: resource metadata → its authorization server (RFC 8414 path form) → endpoints with its scopes and resource', async () => {
    let t
    t = await serve({
      [`GET ${PR}/mcp`]: (req, res) =>
        json({ resource: `${t.base}/mcp`, authorization_servers: [`${t.base}/tenant`], scopes_supported: ['mcp:read', 'mcp:write'] })(
          req,
          res,
        ),
      [`GET ${AS}/tenant`]: (req, res) =>
        json({
          issuer: `${t.base}/tenant`,
          authorization_endpoint: `${t.base}/tenant/authorize`,
          token_endpoint: `${t.base}/tenant/token`,
          registration_endpoint: `${t.base}/tenant/register`,
          public_client_id: 'pub',
          scopes_supported: ['ignored'],
        })(req, res),
    })
    const rm = `${t.base}${PR}/mcp`
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`, undefined, rm)).toStrictEqual({
      authorizationUrl: `${t.base}/tenant/authorize`,
      tokenUrl: `${t.base}/tenant/token`,
      issuerUrl: `${t.base}/tenant`,
      registrationUrl: `${t.base}/tenant/register`,
      clientId: 'pub',
      scopes: 'mcp:read mcp:write',
      resource: `${t.base}/mcp`,
    })
    expect(gets(t)).toEqual([`${PR}/mcp`, `${AS}/tenant`])
  }, 10000)

  it('bases in order: the resource metadata’s servers, then authServerUrl, then the server; issuers probed in the issuer order', async () => {
    let t
    t = await serve({
      'GET /prm': (req, res) => json({ authorization_servers: [`${t.base}/as1`], scopes: 'p1' })(req, res),
      [`GET ${AS}/as2`]: (req, res) =>
        json({ issuer: `${t.base}/as2`, authorization_endpoint: 'A', token_endpoint: 'T', scopes_supported: ['a'] })(req, res),
    })
    const found = await discoverOAuthEndpoints(`${t.base}/mcp`, `${t.base}/as2`, `${t.base}/prm`)
    expect(found).toStrictEqual({
      authorizationUrl: 'A',
      tokenUrl: 'T',
      issuerUrl: `${t.base}/as2`,
      registrationUrl: undefined,
      clientId: undefined,
      scopes: 'p1',
      resource: undefined,
    })
    expect(gets(t)).toEqual([
      '/prm',
      `${AS}/as1`,
      `/as1${AS}`,
      AS,
      `/as1${OIDC}`,
      `${OIDC}/as1`,
      OIDC,
      `${PR}/as1`,
      `/as1${PR}`,
      PR,
      '/as1/oauth/metadata',
      '/oauth/metadata',
      '/as1/.mcp/auth',
      '/.mcp/auth',
      '/as1/authorize',
      '/authorize',
      `${AS}/as2`,
    ])
  }, 10000)

  it('an issuer’s RFC 8414 / OpenID document must name it (trailing slash aside); others are passed over', async () => {
    let t
    t = await serve({
      [`GET ${AS}/tenant`]: json({ issuer: 'https://evil.example', authorization_endpoint: 'EVIL', token_endpoint: 'EVIL' }),
      [`GET ${AS}`]: (req, res) => json({ issuer: t.base, authorization_endpoint: 'ROOT', token_endpoint: 'ROOT' })(req, res),
      [`GET /tenant${OIDC}`]: (req, res) =>
        json({ issuer: `${t.base}/tenant/`, authorization_endpoint: 'A', token_endpoint: 'T', scopes_supported: ['x', 1, 'y'] })(req, res),
    })
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`, `${t.base}/tenant`)).toStrictEqual({
      authorizationUrl: 'A',
      tokenUrl: 'T',
      issuerUrl: `${t.base}/tenant/`,
      registrationUrl: undefined,
      clientId: undefined,
      scopes: 'x y',
      resource: undefined,
    })
    expect(gets(t)).toEqual([`${AS}/tenant`, `/tenant${AS}`, AS, `/tenant${OIDC}`])
  }, 10000)

  it('resource metadata found on the way leads to its authorization server (no issuer check on the resource’s own paths)', async () => {
    let t
    t = await serve({
      [`GET ${PR}/mcp`]: (req, res) =>
        json({ resource: `${t.base}/mcp`, authorization_servers: [`${t.base}/as`], scopes_supported: ['s1'] })(req, res),
      [`GET ${AS}/as`]: (req, res) =>
        json({ issuer: `${t.base}/as`, authorization_endpoint: 'A', token_endpoint: 'T', resource: 'R2', scopes_supported: ['zz'] })(
          req,
          res,
        ),
    })
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`)).toStrictEqual({
      authorizationUrl: 'A',
      tokenUrl: 'T',
      issuerUrl: `${t.base}/as`,
      registrationUrl: undefined,
      clientId: undefined,
      scopes: 's1',
      resource: 'R2',
    })
    expect(gets(t)).toEqual([`${PR}/mcp`, `${AS}/as`])
  }, 10000)

  it('failed probes move on: non-2xx, not JSON, null, unmatched; the nested auth shape; redirects followed', async () => {
    const t = await serve({
      [`GET ${PR}/mcp`]: (_req, res) => {
        res.writeHead(302, { Location: '/elsewhere' })
        res.end()
      },
      'GET /elsewhere': json({ resource: 'https://res.example/mcp' }),
      [`GET ${AS}/mcp`]: json('<html>nope</html>'),
      [`GET /mcp${AS}`]: json('null'),
      [`GET ${AS}`]: json({ authorization_endpoint: 'A' }),
      [`GET ${OIDC}/mcp`]: json({ authorization_endpoint: 'A', token_endpoint: 'T' }, 500),
      'GET /mcp/oauth/metadata': json({}),
      'GET /oauth/metadata': json({
        oauth: { authorization_url: 'AU', token_url: 'TU', public_client_id: 'pub', scope: 's', issuer: 'I' },
      }),
    })
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`)).toStrictEqual({
      authorizationUrl: 'AU',
      tokenUrl: 'TU',
      issuerUrl: 'I',
      registrationUrl: undefined,
      clientId: 'pub',
      scopes: 's',
      resource: undefined,
    })
    expect(gets(t)).toEqual([...RESOURCE_ORDER.slice(0, 1), '/elsewhere', ...RESOURCE_ORDER.slice(1, 11)])
  }, 10000)

  it('an unreachable server, or a URL that does not parse: null', async () => {
    const t = await serve({})
    const port = Number(new URL(t.base).port)
    await t.close()
    stubs.length = 0
    expect(
      await discoverOAuthEndpoints(`http://127.0.0.1:${port}/mcp`, `http://127.0.0.1:${port}/as`, `http://127.0.0.1:${port}/prm`),
    ).toBeNull()
    expect(await discoverOAuthEndpoints('not a url')).toBeNull()
  }, 10000)

  it('options.fetch is used for every GET, with the agent’s request shape', async () => {
    const t = await serve({
      [`GET ${PR}/mcp`]: (req, res) => json({ authorization_servers: [t.base] })(req, res),
      [`GET ${AS}`]: (req, res) => json({ issuer: t.base, authorization_endpoint: 'A', token_endpoint: 'T' })(req, res),
    })
    const calls = []
    const fetchImpl = (url, init) => {
      calls.push([url, init])
      return fetch(url, init)
    }
    const found = await discoverOAuthEndpoints(`${t.base}/mcp`, undefined, undefined, { fetch: fetchImpl })
    expect(found?.authorizationUrl).toBe('A')
    expect(calls.map(([url]) => url)).toEqual([`${t.base}${PR}/mcp`, `${t.base}${AS}`])
    for (const [url, init] of calls) {
      expect(typeof url).toBe('string')
      expect(Object.keys(init).sort()).toEqual(['headers', 'method', 'redirect', 'signal'])
      expect([init.method, init.headers, init.redirect]).toEqual(['GET', { Accept: 'application/json' }, 'follow'])
      expect(init.signal).toBeInstanceOf(AbortSignal)
    }
    expect(calls.length).toBe(gets(t).length)
  }, 10000)

  it('[fix] two authorization servers without metadata, named by the resource: the agent recurses forever; here it ends', async () => {
    const t = await serve({
      [`GET ${PR}/mcp`]: (req, res) => json({ authorization_servers: [`${t.base}/a`, `${t.base}/b`] })(req, res),
    })
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`)).toBeNull()
    // The server (15 GETs) and each of a and b (15 each), twice over in both orders, and no more.
    expect(gets(t)).toHaveLength(135)
    expect(gets(t).filter((p) => p === `${PR}/mcp`)).toHaveLength(5)
  }, 20000)
})

describe('deadlines, aborts and bounded documents', () => {
  it('a silent probe fails after options.timeout and discovery moves on (the connection dropped)', async () => {
    let t
    t = await stub({
      'GET /silent-prm': silent(),
      [`GET ${AS}/mcp`]: json({ authorization_endpoint: 'A', token_endpoint: 'T' }),
    })
    const started = Date.now()
    const found = await discoverOAuthEndpoints(`${t.base}/mcp`, undefined, `${t.base}/silent-prm`, { timeout: 200 })
    expect(found?.authorizationUrl).toBe('A')
    expect(Date.now() - started).toBeGreaterThanOrEqual(180)
    expect(gets(t)).toEqual(['/silent-prm', ...RESOURCE_ORDER.slice(0, 4)])
    await waitFor(() => t.requests[0].closed, 3000)
  }, 10000)

  it('the default deadline of each GET is 10 s', async () => {
    const started = Date.now()
    const stuck = (_url, init) =>
      new Promise((_resolve, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true }))
    const seen = []
    const fetchImpl = (url, init) => {
      seen.push(url)
      return seen.length === 1 ? stuck(url, init) : Promise.reject(new TypeError('fetch failed'))
    }
    expect(await fetchResourceMetadataScopes('http://127.0.0.1:9/prm', { fetch: fetchImpl })).toBeUndefined()
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(9900)
    expect(elapsed).toBeLessThan(14000)
  }, 20000)

  it('an abort fails the probe in flight and every one after it: null, and nothing more is sent', async () => {
    const t = await stub({ [`GET ${PR}/mcp`]: silent() })
    const ac = new AbortController()
    const pending = settle(discoverOAuthEndpoints(`${t.base}/mcp`, undefined, undefined, { signal: ac.signal }))
    await waitFor(() => t.requests.length === 1, 5000)
    const started = Date.now()
    ac.abort(new Error('user went away'))
    expect(await pending).toEqual({ value: null })
    expect(Date.now() - started).toBeLessThan(1000)
    await waitFor(() => t.requests[0].closed, 3000)
    expect(t.requests).toHaveLength(1)
  }, 10000)

  it('[fix] a document over 1 MiB is not read (with or without Content-Length)', async () => {
    const big = JSON.stringify({ authorization_endpoint: 'BIG', token_endpoint: 'BIG', pad: 'x'.repeat(1024 * 1024) })
    const t = await serve({
      [`GET ${PR}/mcp`]: (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' })
        res.end(big)
      },
      [`GET ${AS}/mcp`]: (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' })
        for (let i = 0; i < big.length; i += 65536) res.write(big.slice(i, i + 65536))
        res.end()
      },
      [`GET /mcp${AS}`]: json({ authorization_endpoint: 'A', token_endpoint: 'T' }),
    })
    const found = await discoverOAuthEndpoints(`${t.base}/mcp`)
    expect(found?.authorizationUrl).toBe('A')
    expect(gets(t)).toEqual(RESOURCE_ORDER.slice(0, 5))
  }, 10000)

  it('an invalid timeout is refused', async () => {
    const error = await discoverOAuthEndpoints('http://127.0.0.1:9/mcp', undefined, undefined, { timeout: -1 }).catch((e) => e)
    expect(error.code).toBe('MCP_INVALID_CONFIG')
    expect(error.message).toBe('Invalid options: "timeout" must be a non-negative number')
  })
})

describe('fetchResourceMetadataScopes', () => {
  it('scopes_supported, else scopes, else scope; undefined for anything else', async () => {
    const t = await serve({
      'GET /a': json({ scopes_supported: ['mcp:read', 7, 'mcp:write'] }),
      'GET /b': json({ scopes_supported: [], scopes: ' ', scope: 'z' }),
      'GET /c': json('[1]'),
      'GET /d': json({ scopes_supported: ['x'] }, 404),
      'GET /e': json('{not json'),
      'GET /f': silent(),
    })
    expect(await fetchResourceMetadataScopes(`${t.base}/a`)).toBe('mcp:read mcp:write')
    expect(await fetchResourceMetadataScopes(`${t.base}/b`)).toBe('z')
    expect(await fetchResourceMetadataScopes(`${t.base}/c`)).toBeUndefined()
    expect(await fetchResourceMetadataScopes(`${t.base}/d`)).toBeUndefined()
    expect(await fetchResourceMetadataScopes(`${t.base}/e`)).toBeUndefined()
    expect(await fetchResourceMetadataScopes(`${t.base}/f`, { timeout: 150 })).toBeUndefined()
    expect(await fetchResourceMetadataScopes('not a url')).toBeUndefined()
    expect(gets(t)).toEqual(['/a', '/b', '/c', '/d', '/e', '/f'])
  }, 10000)
})

describe('an object as second argument keeps the package’s earlier meaning (SPEC 11.3)', () => {
  it('discoverOAuthEndpoints(url, options): 12.7’s five origin paths, and an abort rejects', async () => {
    const t = await serve({})
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`, { timeout: 2000 })).toBeNull()
    expect(gets(t)).toEqual([AS, OIDC, '/oauth/metadata', '/.mcp/auth', '/authorize'])
    const ac = new AbortController()
    ac.abort('early')
    await expect(discoverOAuthEndpoints(`${t.base}/mcp`, { signal: ac.signal })).rejects.toBe('early')
    // Positional, the same signal: every probe fails at once, null, nothing sent.
    expect(await discoverOAuthEndpoints(`${t.base}/mcp`, undefined, undefined, { signal: ac.signal })).toBeNull()
    expect(gets(t)).toHaveLength(5)
  }, 10000)
})

describe('from a real 401 to the endpoints, as the agent chains them', () => {
  it('WWW-Authenticate resource_metadata (the OAuth fixture): analyze, then discover', async () => {
    const server = await startOAuthServer()
    try {
      const { error } = await settle(connectToServer('guarded', { type: 'http', url: server.url, timeout: 5000 }))
      expect(error.message).toMatch(/^HTTP 401/)
      const auth = analyzeAuthError(error, server.url)
      expect(auth).toStrictEqual({
        requiresAuth: true,
        authType: 'apikey', // "Bearer" in the message: the agent still discovers, having no endpoints
        authServerUrl: undefined,
        resourceMetadataUrl: `${server.base}/.well-known/oauth-protected-resource/mcp`,
        scopes: undefined,
        message: APIKEY,
      })
      const found = await discoverOAuthEndpoints(server.url, auth.authServerUrl, auth.resourceMetadataUrl, { protectedScopes: auth.scopes })
      expect(found).toStrictEqual({
        authorizationUrl: `${server.base}/authorize`,
        tokenUrl: `${server.base}/token`,
        issuerUrl: server.base,
        registrationUrl: `${server.base}/register`,
        clientId: undefined,
        scopes: 'mcp:read',
        resource: `${server.base}/mcp`,
      })
      expect(await fetchResourceMetadataScopes(auth.resourceMetadataUrl)).toBe('mcp:read')
    } finally {
      await server.close()
    }
  }, 15000)

  it('Mcp-Auth-Server and a challenged scope, no resource_metadata: RFC 9728 URL, then the named server', async () => {
    let t
    t = await serve({
      'POST /mcp': (_req, res) => {
        res.writeHead(401, { 'WWW-Authenticate': 'Bearer error="invalid_token", scope="files:read"', 'Mcp-Auth-Server': '/tenant' })
        res.end()
      },
      [`GET ${AS}/tenant`]: (req, res) =>
        json({ issuer: `${t.base}/tenant`, authorization_endpoint: 'A', token_endpoint: 'T', scopes_supported: ['other'] })(req, res),
    })
    const url = `${t.base}/mcp`
    const { error } = await settle(connectToServer('tenant', { type: 'http', url, timeout: 5000 }))
    const auth = analyzeAuthError(error, url)
    expect([auth.authServerUrl, auth.resourceMetadataUrl, auth.scopes]).toEqual([`${t.base}/tenant`, `${t.base}${PR}/mcp`, 'files:read'])
    const found = await discoverOAuthEndpoints(url, auth.authServerUrl, auth.resourceMetadataUrl, { protectedScopes: auth.scopes })
    expect(found).toStrictEqual({
      authorizationUrl: 'A',
      tokenUrl: 'T',
      issuerUrl: `${t.base}/tenant`,
      registrationUrl: undefined,
      clientId: undefined,
      scopes: 'files:read',
      resource: undefined,
    })
    expect(gets(t)).toEqual([`${PR}/mcp`, `${AS}/tenant`])
  }, 15000)
})
