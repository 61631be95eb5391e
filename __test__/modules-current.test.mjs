// The root's small modules as the agent ships them today (18.3.4): timeout, request-id,
// transports/header-policy and the values of types. mcpFetch against real loopback HTTP servers.
// vitest (Node) and `bun test` (Bun).
import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { RequestIdAllocator } from 'mcp-native/request-id'
import {
  createMCPTimeout,
  describeMCPTimeout,
  getNeverAbortSignal,
  isMCPTimeoutEnabled,
  resolveMCPStartupTimeoutMs,
} from 'mcp-native/timeout'
import { mcpFetch, mergeMCPHeaders, setGeneratedHeader, withoutHeader } from 'mcp-native/transports/header-policy'
import { MCPNotificationMethods, MCP_CONFIG_SCHEMA_URL, MCP_PROTOCOL_VERSION, toJsonRpcError } from 'mcp-native/types'
import * as compatTypes from 'mcp-native/compat-12.7/types'

describe('timeout', () => {
  it('createMCPTimeout tells its own deadline from the caller’s abort, whichever came first', async () => {
    expect(isMCPTimeoutEnabled(0)).toBe(false)
    expect(describeMCPTimeout(0)).toBe('disabled')
    expect(describeMCPTimeout(1500)).toBe('1500ms')
    expect(getNeverAbortSignal()).toBe(getNeverAbortSignal())
    expect(getNeverAbortSignal().aborted).toBe(false)
    const before = process.env.OMP_MCP_STARTUP_TIMEOUT_MS
    delete process.env.OMP_MCP_STARTUP_TIMEOUT_MS
    expect(resolveMCPStartupTimeoutMs()).toBe(250)
    if (before !== undefined) process.env.OMP_MCP_STARTUP_TIMEOUT_MS = before

    // No deadline: the caller's signal as it is.
    const ac0 = new AbortController()
    const none = createMCPTimeout(0, ac0.signal)
    expect(none.signal).toBe(ac0.signal)
    expect(none.timedOut()).toBe(false)

    // The deadline fires first; a later caller abort does not change that.
    const ac = new AbortController()
    const op = createMCPTimeout(30, ac.signal)
    const fired = await new Promise((resolve) => op.signal.addEventListener('abort', () => resolve(true), { once: true }))
    expect(fired).toBe(true)
    ac.abort()
    expect(op.timedOut()).toBe(true)
    const abortError = Object.assign(new Error('x'), { name: 'AbortError' })
    expect(op.isTimeoutAbort(abortError)).toBe(true)
    expect(op.isTimeoutAbort(new SyntaxError('Unexpected end of JSON input'))).toBe(true)
    expect(op.isTimeoutAbort(new TypeError('other'))).toBe(false)

    // The caller aborts first: the timer never counts.
    const ac2 = new AbortController()
    const op2 = createMCPTimeout(40, ac2.signal)
    ac2.abort(new Error('caller'))
    expect(op2.signal.aborted).toBe(true)
    await new Promise((r) => setTimeout(r, 80))
    expect(op2.timedOut()).toBe(false)
    expect(op2.isTimeoutAbort(abortError)).toBe(false)

    // clear(): no timer fires afterwards.
    const op3 = createMCPTimeout(20)
    op3.clear()
    await new Promise((r) => setTimeout(r, 50))
    expect(op3.signal.aborted).toBe(false)
    expect(op3.timedOut()).toBe(false)
  })
})

describe('request-id', () => {
  it('integers from 1 per allocator; with "string" a 16-hex-digit id, never repeated', () => {
    const a = new RequestIdAllocator()
    const b = new RequestIdAllocator()
    expect([a.next(undefined), a.next('number'), a.next(undefined)]).toEqual([1, 2, 3])
    expect(b.next()).toBe(1)
    const ids = new Set()
    for (let i = 0; i < 1000; i++) {
      const id = a.next('string')
      expect(id).toMatch(/^[0-9a-f]{16}$/)
      ids.add(id)
    }
    expect(ids.size).toBe(1000)
    // Time-ordered: the high bits are milliseconds since 2015-01-01.
    const ms = Number(BigInt(`0x${a.next('string')}`) >> 22n) + 1420070400000
    expect(Math.abs(ms - Date.now())).toBeLessThan(5000)
    expect(a.next()).toBe(4)
  })
})

describe('types', () => {
  it('has the agent’s values at the root, none in the 12.7 profile', () => {
    expect(MCP_PROTOCOL_VERSION).toBe('2025-11-25')
    expect(MCP_CONFIG_SCHEMA_URL).toMatch(/^https:\/\/.*mcp-schema\.json$/)
    expect(MCPNotificationMethods.RESOURCES_UPDATED).toBe('notifications/resources/updated')
    expect(Object.isFrozen(MCPNotificationMethods)).toBe(true)
    expect(toJsonRpcError(Object.assign(new Error('m'), { code: -32001 }))).toEqual({ code: -32001, message: 'm' })
    expect(toJsonRpcError(Object.assign(new Error('m'), { code: 'E' }))).toEqual({ code: -32603, message: 'm' })
    expect(toJsonRpcError({ code: 7, message: 'x', extra: 1 })).toEqual({ code: 7, message: 'x' })
    expect(toJsonRpcError('nope')).toEqual({ code: -32603, message: 'Internal error' })
    expect(Object.keys(compatTypes).filter((k) => k !== 'default' && k !== 'module.exports')).toEqual([])
  })
})

describe('transports/header-policy', () => {
  it('generated headers win in any case; withoutHeader keeps the object when there is nothing to strip', () => {
    expect(mergeMCPHeaders({ generated: { Accept: 'a' }, configured: { accept: 'x', 'X-Key': 'k' } })).toEqual({
      'X-Key': 'k',
      Accept: 'a',
    })
    expect(mergeMCPHeaders({ generated: { A: '1' } })).toEqual({ A: '1' })
    const h = { authorization: 'old', 'X-A': '1' }
    setGeneratedHeader(h, 'Authorization', 'Bearer t')
    expect(h).toEqual({ 'X-A': '1', Authorization: 'Bearer t' })
    const plain = { 'X-A': '1' }
    expect(withoutHeader(plain, 'mcp-protocol-version')).toBe(plain)
    expect(withoutHeader({ 'MCP-Protocol-Version': 'v', 'X-A': '1' }, 'mcp-protocol-version')).toEqual({ 'X-A': '1' })
    expect(withoutHeader(undefined, 'x')).toBeUndefined()
  })

  // Two loopback origins (two ports): the configured one redirects as told; the other records.
  let home
  let away
  const seen = []
  const listen = (handler) =>
    new Promise((resolve) => {
      const s = createServer(handler)
      s.listen(0, '127.0.0.1', () => resolve({ server: s, base: `http://127.0.0.1:${s.address().port}` }))
    })
  beforeAll(async () => {
    away = await listen((req, res) => {
      seen.push({ where: 'away', url: req.url, method: req.method, key: req.headers['x-key'] ?? null, accept: req.headers.accept })
      res.end('away')
    })
    home = await listen((req, res) => {
      seen.push({ where: 'home', url: req.url, method: req.method, key: req.headers['x-key'] ?? null })
      const m = /^\/redirect\/(\d+)\/(.*)$/.exec(req.url)
      if (m) {
        res.writeHead(Number(m[1]), { location: m[2] === 'away' ? `${away.base}/landed` : `/${m[2]}` })
        return res.end()
      }
      if (req.url.startsWith('/loop')) {
        res.writeHead(307, { location: '/loop' })
        return res.end()
      }
      res.end('home')
    })
  })
  afterAll(() => {
    home.server.close()
    away.server.close()
  })

  it('origin-locked: configured headers only to the configured origin; no 301/302/303 for POST; at most 5 hops', async () => {
    const sources = { generated: { Accept: 'application/json' }, configured: { 'X-Key': 'secret', accept: 'ignored' } }
    seen.length = 0
    const r1 = await mcpFetch(`${home.base}/redirect/307/away`, { method: 'POST', body: '{}' }, sources, true)
    expect(await r1.text()).toBe('away')
    expect(seen).toEqual([
      { where: 'home', url: '/redirect/307/away', method: 'POST', key: 'secret' },
      { where: 'away', url: '/landed', method: 'POST', key: null, accept: 'application/json' },
    ])
    seen.length = 0
    const r2 = await mcpFetch(`${home.base}/redirect/308/same`, { method: 'GET' }, sources, true)
    expect(await r2.text()).toBe('home')
    expect(seen.map((s) => s.key)).toEqual(['secret', 'secret'])
    await expect(mcpFetch(`${home.base}/redirect/302/same`, { method: 'POST', body: '{}' }, sources, true)).rejects.toThrow(
      /^HTTP 302: server redirected a POST request; refusing to follow$/,
    )
    const r3 = await mcpFetch(`${home.base}/redirect/302/same`, { method: 'GET' }, sources, true)
    expect(await r3.text()).toBe('home')
    seen.length = 0
    await expect(mcpFetch(`${home.base}/loop?token=T0P`, { method: 'GET' }, sources, true)).rejects.toThrow(
      /^Too many redirects \(> 5\) fetching http:\/\/127\.0\.0\.1:\d+\/loop\?token=%5Bredacted%5D$/,
    )
    expect(seen.length).toBe(6)
    // Not locked: the runtime's own redirects; the precedence still holds.
    seen.length = 0
    const r4 = await mcpFetch(`${home.base}/plain`, { method: 'GET' }, sources, false)
    expect(await r4.text()).toBe('home')
    expect(seen).toEqual([{ where: 'home', url: '/plain', method: 'GET', key: 'secret' }])
  })
})
