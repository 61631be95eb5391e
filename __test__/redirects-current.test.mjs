// Redirects of the HTTP transport at the root (18.3.4 `mcpFetch`, SPEC 11.4 "Headers and config
// values"): with `headerPolicy: "origin-locked"` they are followed by hand — configured headers kept
// on the configured origin, only the protocol headers off it, at most 5 hops, a POST redirected
// with 301/302/303 refused; without a policy as `fetch` follows them (credentials dropped off the
// origin, other configured headers kept). 12.7's profile follows them within the origin only.
// Two loopback origins in front of the HTTP fixture. vitest (Node) and `bun test` (Bun).
import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { connectToServer, disconnectServer } from 'mcp-native/client'
import * as compat from 'mcp-native/compat-12.7/client'
import { startHttpFixture } from './helpers.mjs'

const T = 15000
let fixture
let fixtureBase
/** @type {Array<{ origin: string, method: string, path: string, rpc: string | null, key: string | null, auth: string | null }>} */
const seen = []
const fronts = []

/** A front server (its own origin) that answers the paths of `redirects` itself and passes the rest to the fixture. */
async function front(name, redirects) {
  const srv = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    let rpc = null
    try {
      rpc = JSON.parse(body).method ?? null
    } catch {}
    seen.push({
      origin: name,
      method: req.method,
      path: req.url,
      rpc,
      key: req.headers['x-api-key'] ?? null,
      auth: req.headers.authorization ?? null,
    })
    const r = redirects[req.url.split('?')[0]]
    if (r) return res.writeHead(r[0], { location: r[1]() }).end()
    const headers = {}
    for (const [k, v] of Object.entries(req.headers)) if (!['host', 'content-length', 'connection'].includes(k)) headers[k] = v
    const answer = await fetch(`${fixtureBase}${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? body : undefined })
    const out = {}
    answer.headers.forEach((v, k) => {
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k)) out[k] = v
    })
    res.writeHead(answer.status, out)
    res.end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  fronts.push(srv)
  return `http://127.0.0.1:${srv.address().port}`
}

let a
let b
beforeAll(async () => {
  ;({ child: fixture, base: fixtureBase } = await startHttpFixture())
  b = await front('b', { '/back': [307, () => `${a}/mcp`] })
  a = await front('a', {
    '/hop': [307, () => '/mcp'],
    '/away': [308, () => `${b}/mcp`],
    '/round': [307, () => `${b}/back`],
    '/see-other': [303, () => '/mcp'],
    '/found': [302, () => '/mcp'],
    '/loop': [307, () => '/loop'],
  })
}, T)
afterAll(() => {
  for (const srv of fronts) {
    srv.closeAllConnections()
    srv.close()
  }
  fixture?.kill()
})

const headers = { 'X-Api-Key': 'secret', Authorization: 'Bearer configured' }
/** Connects, lists the tools and closes; what each origin saw of the POSTs meanwhile. */
async function run(path, extra = {}, connect = connectToServer, disconnect = disconnectServer) {
  const from = seen.length
  const out = {}
  try {
    const conn = await connect('r', { type: 'http', url: `${a}${path}`, headers, ...extra })
    out.tools = (conn.tools ?? []).length
    await disconnect(conn)
  } catch (error) {
    out.error = { message: error.message, code: error.code }
  }
  out.posts = seen
    .slice(from)
    .filter((s) => s.method === 'POST')
    .map(({ origin, path, rpc, key, auth }) => [origin, path, rpc, key, auth])
  return out
}

describe('origin-locked (18.3.4)', () => {
  it(
    'within the origin: followed with every header',
    async () => {
      const out = await run('/hop', { headerPolicy: 'origin-locked' })
      expect(out.error).toBeUndefined()
      expect(out.posts.slice(0, 2)).toEqual([
        ['a', '/hop', 'initialize', 'secret', 'Bearer configured'],
        ['a', '/mcp', 'initialize', 'secret', 'Bearer configured'],
      ])
    },
    T,
  )

  it(
    'off the origin only the protocol headers go; back on it the configured ones again',
    async () => {
      const away = await run('/away', { headerPolicy: 'origin-locked' })
      expect(away.error).toBeUndefined()
      expect(away.posts.slice(0, 2)).toEqual([
        ['a', '/away', 'initialize', 'secret', 'Bearer configured'],
        ['b', '/mcp', 'initialize', null, null],
      ])
      const round = await run('/round', { headerPolicy: 'origin-locked' })
      expect(round.error).toBeUndefined()
      expect(round.posts.slice(0, 3)).toEqual([
        ['a', '/round', 'initialize', 'secret', 'Bearer configured'],
        ['b', '/back', 'initialize', null, null],
        ['a', '/mcp', 'initialize', 'secret', 'Bearer configured'],
      ])
    },
    T,
  )

  it(
    'a POST redirected with 303 or 302 is refused (code = the status), never sent as a GET',
    async () => {
      for (const [path, status] of [
        ['/see-other', 303],
        ['/found', 302],
      ]) {
        const out = await run(path, { headerPolicy: 'origin-locked' })
        expect(out.error).toEqual({ message: `HTTP ${status}: server redirected a POST request; refusing to follow`, code: status })
        expect(out.posts).toEqual([['a', path, 'initialize', 'secret', 'Bearer configured']])
      }
    },
    T,
  )

  it(
    'six redirects in a row: the request and 5 hops, then "Too many redirects", the URL’s key redacted',
    async () => {
      const out = await run('/loop?api_key=abc', { headerPolicy: 'origin-locked' })
      expect(out.error.message).toBe(`Too many redirects (> 5) fetching ${a}/loop?api_key=[redacted]`)
      expect(out.posts.length).toBe(6)
    },
    T,
  )
})

describe('without a policy (18.3.4: as fetch follows them)', () => {
  it(
    'another origin: followed, credentials dropped, other configured headers kept',
    async () => {
      const out = await run('/away')
      expect(out.error).toBeUndefined()
      expect(out.posts.slice(0, 2)).toEqual([
        ['a', '/away', 'initialize', 'secret', 'Bearer configured'],
        ['b', '/mcp', 'initialize', 'secret', null],
      ])
    },
    T,
  )
})

describe('compat-12.7', () => {
  it(
    'within the origin only: a redirect to another origin is the answer, and the other origin sees nothing',
    async () => {
      const out = await run('/away', {}, compat.connectToServer, compat.disconnectServer)
      expect(out.error.message).toMatch(/^HTTP 308: /)
      expect(out.posts).toEqual([['a', '/away', 'initialize', 'secret', 'Bearer configured']])
    },
    T,
  )
})
