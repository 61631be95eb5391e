// The root's one-shot JSON-RPC helpers as the agent calls them today (18.3.4 `json-rpc.ts`, SPEC
// 11.4): callMCP with its options, readMcpJsonRpcResponse, redactUrlForLog. Against the project's
// HTTP fixture on loopback; runs under vitest (Node) and `bun test` (Bun) alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { callMCP as rootCallMCP } from 'mcp-native'
import { callMCP as callMCP127 } from 'mcp-native/compat-12.7/json-rpc'
import { callMCP, readMcpJsonRpcResponse, redactUrlForLog } from 'mcp-native/json-rpc'
import { settle, startHttpFixture } from './helpers.mjs'

let server
let url
beforeAll(async () => {
  const fx = await startHttpFixture()
  server = fx.child
  url = `${fx.base}/mcp`
})
afterAll(() => server.kill())

/** A Response whose body arrives in the given chunks (strings as UTF-8, or byte arrays). */
function chunked(chunks, contentType = 'text/event-stream') {
  const enc = new TextEncoder()
  const body = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === 'string' ? enc.encode(c) : c)
      controller.close()
    },
  })
  return new Response(body, { headers: { 'content-type': contentType } })
}

describe('callMCP at the root (18.3.4)', () => {
  it('is the root and sub-path object; 12.7 keeps its own', () => {
    expect(rootCallMCP).toBe(callMCP)
    expect(callMCP127).not.toBe(callMCP)
  })

  it('callMCP picks the matching response after notifications (18.2.0)', async () => {
    // Three notifications come first on the SSE stream; 12.7 would return the first of them.
    const sse = await callMCP(url, 'sse-echo', { notes: 3 })
    expect(sse.result).toEqual({ echoed: { notes: 3 } })
    expect(typeof sse.id).toBe('string')
    const old = await callMCP127(url, 'sse-echo', { notes: 3 })
    expect(old).toMatchObject({ method: 'fixture/note', params: { i: 0 } })
    // Only a notification and an answer to someone else: no answer for this request.
    await expect(callMCP(url, 'sse-no-answer')).rejects.toThrow(/^MCP response ID did not match request ID$/)
    // A JSON body: the envelope, a JSON-RPC error returned (not thrown).
    expect((await callMCP(url, 'echo', { x: 1 })).result).toEqual({ x: 1 })
    expect((await callMCP(url, 'error', { code: -32000, message: 'bad' })).error).toEqual({ code: -32000, message: 'bad' })
  })

  it('maps failures through onHttpError and onParseError; defaults otherwise', async () => {
    const seen = []
    const mapped = await settle(
      callMCP(
        url,
        'http-error',
        { status: 418, body: 'teapot body' },
        {
          onHttpError: (response, body) => {
            seen.push([response.status, body])
            return new Error(`mapped ${response.status}`)
          },
        },
      ),
    )
    expect(mapped.error.message).toBe('mapped 418')
    expect(seen).toEqual([[418, 'teapot body']])
    await expect(callMCP(url, 'http-error', { status: 503 })).rejects.toThrow(/^MCP request failed: 503 Service Unavailable$/)
    // Not JSON: JSON.parse's SyntaxError, or the mapped error.
    await expect(callMCP(url, 'not-json')).rejects.toThrow(SyntaxError)
    const parse = await settle(callMCP(url, 'not-json', {}, { onParseError: (e) => new Error(`parse: ${e.name}`) }))
    expect(parse.error.message).toBe('parse: SyntaxError')
    // Malformed JSON-RPC (no jsonrpc member; a response with both result and error).
    await expect(callMCP(url, 'raw-message', { text: '{"id":$ID,"result":{}}' })).rejects.toThrow(/^Malformed JSON-RPC message$/)
    await expect(callMCP(url, 'raw-message', { text: '{"jsonrpc":"2.0","id":$ID,"result":1,"error":{}}', sse: true })).rejects.toThrow(
      /^Malformed JSON-RPC response$/,
    )
    await expect(callMCP(url, 'raw-message', { text: '{"jsonrpc":"2.0","id":$ID,"error":{"code":"x","message":"m"}}' })).rejects.toThrow(
      /^Malformed JSON-RPC error response$/,
    )
  })

  it('uses the given fetch and headers; signal aborts; timeout only when asked', async () => {
    const calls = []
    const recording = (input, init) => {
      calls.push([String(input), init.method, JSON.parse(init.body).method])
      return fetch(input, init)
    }
    const got = await callMCP(url, 'headers', {}, { fetch: recording, headers: { 'X-Extra': 'yes' } })
    expect(calls).toEqual([[url, 'POST', 'headers']])
    expect(got.result['x-extra']).toBe('yes')
    expect(got.result.accept).toBe('application/json, text/event-stream')
    const ac = new AbortController()
    const p = settle(callMCP(url, 'slow-headers', { ms: 2000 }, { signal: ac.signal }))
    setTimeout(() => ac.abort(), 20)
    const { error } = await p
    expect(error).toBe(ac.signal.reason)
    // Already aborted: the fetch is still called (and rejects with the reason), as the agent's.
    const before = calls.length
    const gone = new Error('gone before')
    const early = await settle(callMCP(url, 'echo', {}, { fetch: recording, signal: AbortSignal.abort(gone) }))
    expect(early.error).toBe(gone)
    expect(calls.length).toBe(before + 1)
    // An abort while the SSE body is read: the signal's reason too.
    const hang = new AbortController()
    const reading = settle(callMCP(url, 'sse-hang', {}, { signal: hang.signal }))
    setTimeout(() => hang.abort(), 100)
    expect((await reading).error).toBe(hang.signal.reason)
    await expect(callMCP(url, 'slow-headers', { ms: 2000 }, { timeout: 100 })).rejects.toThrow(/^Request timeout after 100ms$/)
    await expect(callMCP(url, 'sse-hang', {}, { timeout: 150 })).rejects.toThrow(/^Request timeout after 150ms$/)
    // A fetch that throws: its error, the URL's key not in it.
    const keyed = `${url}?apiKey=SECRET-KEY-1`
    const broken = await settle(
      callMCP(
        keyed,
        'echo',
        {},
        {
          fetch: () => {
            throw new TypeError(`fetch failed for ${keyed}`)
          },
        },
      ),
    )
    expect(broken.error.message).toBe('fetch failed for <url>')
    expect(JSON.stringify(broken.error)).not.toContain('SECRET-KEY-1')
  })
})

describe('readMcpJsonRpcResponse', () => {
  it('reads SSE in any chunking and line ending, skipping notifications and other ids', async () => {
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } })
    const other = JSON.stringify({ jsonrpc: '2.0', id: 6, result: { other: true } })
    const mine = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { text: 'héllo ✓' } })
    const stream = `\uFEFF: comment\r\nevent: message\r\ndata: ${note}\r\n\r\nid: 2\rdata: ${other}\r\rdata:${mine}\n\n`
    const bytes = new TextEncoder().encode(stream)
    // Every split point, one at a time: CR|LF, inside a multi-byte character, inside the BOM.
    for (let cut = 1; cut < bytes.length; cut += 7) {
      const r = await readMcpJsonRpcResponse(chunked([bytes.slice(0, cut), bytes.slice(cut)]), 7)
      expect(r).toEqual({ jsonrpc: '2.0', id: 7, result: { text: 'héllo ✓' } })
    }
    // Byte by byte.
    const single = await readMcpJsonRpcResponse(chunked([...bytes].map((b) => new Uint8Array([b]))), 7)
    expect(single.result).toEqual({ text: 'héllo ✓' })
    // A data field split over two lines is one message; an event cut by the end still counts.
    const split = chunked([`data: {"jsonrpc":"2.0",\ndata: "id":"a","result":1}`])
    expect(await readMcpJsonRpcResponse(split, 'a')).toEqual({ jsonrpc: '2.0', id: 'a', result: 1 })
    // [DONE] ends the stream.
    await expect(readMcpJsonRpcResponse(chunked([`data: [DONE]\n\ndata: ${mine}\n\n`]), 7)).rejects.toThrow(
      /^MCP response did not include a result or error$/,
    )
    await expect(readMcpJsonRpcResponse(chunked([`data: ${other}\n\n`]), 7)).rejects.toThrow(/^MCP response ID did not match request ID$/)
  })

  it('reads JSON bodies and batches; keeps error data; a string id is not a number id', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', method: 'n' },
      { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'm', data: { why: 1 } } },
    ])
    expect(await readMcpJsonRpcResponse(chunked([batch], 'application/json'), 3)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -1, message: 'm', data: { why: 1 } },
    })
    await expect(
      readMcpJsonRpcResponse(chunked([JSON.stringify({ jsonrpc: '2.0', id: '3', result: 1 })], 'application/json'), 3),
    ).rejects.toThrow(/^MCP response ID did not match request ID$/)
    await expect(readMcpJsonRpcResponse(new Response(null, { headers: { 'content-type': 'text/event-stream' } }), 1)).rejects.toThrow(
      /^MCP SSE response did not include a body$/,
    )
    const ac = new AbortController()
    ac.abort(new Error('gone'))
    await expect(readMcpJsonRpcResponse(chunked(['{}'], 'application/json'), 1, ac.signal)).rejects.toThrow(/^gone$/)
  })
})

describe('redactUrlForLog', () => {
  it('redacts credential-like query values and drops the query of an unparseable URL', () => {
    expect(redactUrlForLog('https://mcp.example.test/mcp?exaApiKey=abc&q=1&access_token=t&Secret=s')).toBe(
      'https://mcp.example.test/mcp?exaApiKey=%5Bredacted%5D&q=1&access_token=%5Bredacted%5D&Secret=%5Bredacted%5D',
    )
    expect(redactUrlForLog('https://mcp.example.test/mcp')).toBe('https://mcp.example.test/mcp')
    expect(redactUrlForLog('not a url?token=abc')).toBe('not a url')
  })
})
