// SPEC 11.3–11.5: the tool objects at the package root, as the agent ships them today (18.3.4):
// names, the prepared arguments, the shaped results, the agent's failure text, and the reconnect
// and retry through the `reconnect` argument — against the fixture server. Tests named after an
// agent CHANGELOG entry are SPEC 11.5's. vitest (Node) and `bun test` (Bun); where Bun runs, the
// name cap's hash is compared with the agent's own `Bun.hash`.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native'
import { connectToServer, disconnectServer } from 'mcp-native/client'
import {
  MCPTransportError,
  createMCPJsonRpcError,
  formatMCPToolFailure,
  mcpTraceIdFromHeaders,
  normalizeMCPTransportError,
} from 'mcp-native/errors'
import {
  DeferredMCPTool,
  MCPTool,
  ToolAbortError,
  canonicalMCPToolNameCandidates,
  createLegacyMCPToolName,
  createMCPToolName,
  deduplicateMCPToolsByName,
  getMCPToolOriginKey,
  isRetriableConnectionError,
  parseMCPToolName,
  resolveMCPToolAlias,
} from 'mcp-native/tool-bridge'
import { ROOT, fixture, waitFor } from './helpers.mjs'

const native = (await import('../native/index.js')).default

let connection
beforeAll(async () => {
  connection = await connectToServer('gh', fixture([], { killGraceMs: 200 }))
  connection._source = { provider: 'claude', providerName: 'Claude Code', path: '/x', level: 'user' }
})
afterAll(() => disconnectServer(connection))
const managers = []
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.disconnectAll()))
})

/** The fixture's `reflect` tool answers with `arguments.result`, under the schema given. */
const reflect = (inputSchema = { type: 'object' }) => ({ name: 'reflect', inputSchema })
const lastCallArgs = async (conn = connection) => {
  const calls = (await conn.transport.request('requests')).requests.filter((r) => r.method === 'tools/call')
  return calls.at(-1).params.arguments
}

describe('names (18.2.1: digits kept)', () => {
  it('mcp__, digits kept, the redundant prefix stripped, the legacy name when it differs', () => {
    expect(createMCPToolName('s3', 'list_v2')).toBe('mcp__s3_list_v2')
    expect(createLegacyMCPToolName('s3', 'list_v2')).toBe('mcp__s_list_v')
    expect(createLegacyMCPToolName('github', 'search')).toBeUndefined()
    expect(createMCPToolName('puppeteer', 'puppeteer_screenshot')).toBe('mcp__puppeteer_screenshot')
    expect(createMCPToolName('My-Server', 'Get-Item')).toBe('mcp__my_server_get_item')
    expect(createMCPToolName('', '')).toBe('mcp__server_tool')
    expect(parseMCPToolName('mcp__github_create_issue')).toEqual({ serverName: 'github', toolName: 'create_issue' })
    expect(parseMCPToolName('mcp_github_x')).toBeNull()
  })

  it("names over 64 characters end in 8 base-36 characters of the agent's Bun.hash of the whole name", () => {
    const server = 'a-very-long-server-name-for-testing'
    const tool = 'and_an_even_longer_tool_name_that_overflows'
    const full = 'mcp__a_very_long_server_name_for_testing_and_an_even_longer_tool_name_that_overflows'
    const name = createMCPToolName(server, tool)
    expect(name).toHaveLength(64)
    // The value Bun 1.3.14 gives (below, compared live where Bun runs).
    const hash = native.mcpWyhash(full).toString(36).slice(0, 8)
    expect(name).toBe(`${full.slice(0, 55)}_${hash}`)
    if (globalThis.Bun) {
      for (const text of ['', 'a', 'abcd', full, 'é€😀', 'x'.repeat(200)]) expect(native.mcpWyhash(text)).toBe(globalThis.Bun.hash(text))
    }
  })

  it('aliases: candidates re-minted at each boundary, a unique match only; origin keys; deduplication by origin', () => {
    expect(canonicalMCPToolNameCandidates('mcp__seedpatch-client__bank')).toEqual(['mcp__seedpatch_client_bank'])
    expect(canonicalMCPToolNameCandidates('mcp__github_search')).toEqual([])
    expect(canonicalMCPToolNameCandidates('read')).toEqual([])
    const registry = new Map([['mcp__seedpatch_client_bank', { name: 'mcp__seedpatch_client_bank' }]])
    expect(resolveMCPToolAlias('mcp__seedpatch-client__bank', (n) => registry.get(n))).toBe(registry.get('mcp__seedpatch_client_bank'))
    expect(resolveMCPToolAlias('mcp__nothing__here', (n) => registry.get(n))).toBeUndefined()
    expect(getMCPToolOriginKey({ name: 'x', mcpServerName: 's', mcpToolName: 't' })).toBe('s\u0000t')
    expect(getMCPToolOriginKey({ name: 'x' })).toBeUndefined()
  })

  it('17.1.6: the collision winner stays the same whatever the order (a reconnect reorders tools)', () => {
    const a = { name: 'mcp__a_b', mcpServerName: 'a', mcpToolName: 'b' }
    const b = { name: 'mcp__a_b', mcpServerName: 'a-', mcpToolName: 'b' }
    const other = { name: 'read' }
    const warnings = []
    const logger = { warn: (message, details) => warnings.push([message, details.keptServer]) }
    expect(deduplicateMCPToolsByName([a, other, b], logger)).toEqual([a, other])
    expect(deduplicateMCPToolsByName([b, other, a], logger)).toEqual([a, other])
    expect(warnings).toEqual([
      ['MCP tool name collision; keeping stable winner', 'a'],
      ['MCP tool name collision; keeping stable winner', 'a'],
    ])
  })
})

describe('tool objects', () => {
  it('15.10.2: approval "write", strict false, mergeCallAndResult, legacyName', () => {
    const [tool] = MCPTool.fromTools(connection, [{ name: 'list_v2', inputSchema: { type: 'object' } }])
    expect(tool.name).toBe('mcp__gh_list_v2')
    expect(tool.legacyName).toBe('mcp__gh_list_v')
    expect(tool.approval).toBe('write')
    expect(tool.strict).toBe(false)
    expect(tool.mergeCallAndResult).toBe(true)
    expect(tool.label).toBe('gh/list_v2')
    expect(Object.keys(tool)).not.toContain('connection')
  })

  it('16.2.0, 16.1.17: the intent field is stripped unless declared; optional empty placeholders are omitted', async () => {
    const schema = { type: 'object', properties: { a: {}, b: {}, c: {}, result: {} }, required: ['a'] }
    const [tool] = MCPTool.fromTools(connection, [reflect(schema)])
    const result = { content: [{ type: 'text', text: 'ok' }] }
    await tool.execute('1', { a: '', b: '', c: {}, d: '', i: 'checking the weather', result }, undefined, {})
    expect(await lastCallArgs()).toEqual({ a: '', d: '', result })
    const [declares] = MCPTool.fromTools(connection, [reflect({ type: 'object', properties: { i: {}, result: {} } })])
    await declares.execute('2', { i: 'kept', result }, undefined, {})
    expect(await lastCallArgs()).toEqual({ i: 'kept', result })
    const [echo] = MCPTool.fromTools(connection, [{ name: 'echo', inputSchema: { type: 'object' } }])
    await echo.execute('3', 'not an object', undefined, {})
    expect(await lastCallArgs()).toEqual({})
  })

  it('17.3.8: image blocks are kept, text and resources joined between them', async () => {
    const [tool] = MCPTool.fromTools(connection, [{ name: 'mixed', inputSchema: { type: 'object' } }])
    const out = await tool.execute('1', {}, undefined, {})
    expect(out.content).toEqual([
      { type: 'text', text: 'first' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'text', text: '[Resource: fixture://r1]\ninside\n\n[Resource: fixture://r2]' },
    ])
    expect(out.details).toMatchObject({ serverName: 'gh', mcpToolName: 'mixed', provider: 'claude', providerName: 'Claude Code' })
    expect(out.isError).toBeUndefined()
  })

  it('18.1.3, 18.3.3: structuredContent is surfaced as fenced JSON (once) and in details', async () => {
    const [tool] = MCPTool.fromTools(connection, [reflect()])
    const structured = { temperature: 21, unit: 'C' }
    const out = await tool.execute(
      '1',
      { result: { content: [{ type: 'text', text: 'sunny' }], structuredContent: structured, _meta: { m: 1 } } },
      undefined,
      {},
    )
    expect(out.content).toEqual([
      { type: 'text', text: 'sunny' },
      { type: 'text', text: `\`\`\`json\n${JSON.stringify(structured, null, 2)}\n\`\`\`` },
    ])
    expect(out.details.structuredContent).toEqual(structured)
    expect(out.details.mcpMeta).toEqual({ m: 1 })
    const dup = await tool.execute(
      '2',
      { result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured } },
      undefined,
      {},
    )
    expect(dup.content).toEqual([{ type: 'text', text: JSON.stringify(structured) }])
  })

  it('a server error is prefixed and flagged; a failure is the agent diagnostic text', async () => {
    const [fail] = MCPTool.fromTools(connection, [{ name: 'fail', inputSchema: { type: 'object' } }])
    const out = await fail.execute('1', {}, undefined, {})
    expect(out.content).toEqual([{ type: 'text', text: 'Error: it broke' }])
    expect(out.isError).toBe(true)
    const closed = await connectToServer('gone', fixture())
    await disconnectServer(closed)
    const [tool] = MCPTool.fromTools(closed, [{ name: 'echo', inputSchema: { type: 'object' } }])
    const failed = await tool.execute('2', { message: 'x' }, undefined, {})
    expect(failed.isError).toBe(true)
    expect(failed.details).toEqual({ serverName: 'gone', mcpToolName: 'echo', isError: true, provider: undefined, providerName: undefined })
    // 18.3.4's text: its stdio transport's "not connected" (the package's own code stays on the
    // error, SPEC 11.3, but is not a line of the text).
    expect(failed.content[0].text).toBe(
      [
        'MCP failure',
        'server: gone',
        'tool: echo',
        'transport: stdio',
        'stage: connect',
        'failure: closed',
        'retryable: yes',
        'message: Transport not connected',
        'next: Reconnect the MCP server, then retry.',
      ].join('\n'),
    )
    const notConnected = Object.assign(new Error('Transport not connected'), { code: 'MCP_NOT_CONNECTED' })
    expect(formatMCPToolFailure(notConnected, 'gone', 'echo')).not.toContain('code:')
  })

  it('a retriable failure reconnects through `reconnect` and retries once; the tool keeps the new connection', async () => {
    const closed = await connectToServer('k', fixture())
    await disconnectServer(closed)
    const fresh = await connectToServer('k', fixture())
    const asked = []
    const [tool] = MCPTool.fromTools(closed, [{ name: 'echo', inputSchema: { type: 'object' } }], async (options) => {
      asked.push(options)
      return fresh
    })
    const out = await tool.execute('1', { message: 'again' }, undefined, {})
    expect(out.content).toEqual([{ type: 'text', text: 'again' }])
    expect(asked).toEqual([undefined])
    await tool.execute('2', { message: 'bound' }, undefined, {})
    expect(asked).toHaveLength(1)
    await disconnectServer(fresh)
  })

  it('17.0.9: a tool-level WWW-Authenticate challenge goes to `reconnect` and the call is retried once on its connection', async () => {
    const other = await connectToServer('gh', fixture())
    const asked = []
    const [tool] = MCPTool.fromTools(connection, [reflect()], async (options) => {
      asked.push(options)
      return other
    })
    const challenge = {
      content: [{ type: 'text', text: 'auth needed' }],
      isError: true,
      _meta: { 'mcp/www_authenticate': ['Bearer realm="x"', ' '] },
    }
    await tool.execute('1', { result: challenge }, undefined, {})
    expect(asked).toEqual([{ authChallenge: { wwwAuthenticate: ['Bearer realm="x"'] } }])
    // The retry went to the new connection.
    expect((await lastCallArgs(other)).result).toEqual(challenge)
    await disconnectServer(other)
  })

  it('a deferred tool whose server never connected asks for a reconnect; an abort throws ToolAbortError', async () => {
    const fresh = await connectToServer('d', fixture())
    const [tool] = DeferredMCPTool.fromTools(
      'd',
      [{ name: 'echo', inputSchema: { type: 'object' } }],
      async () => {
        throw new Error('MCP server not connected: d')
      },
      { provider: 'cursor', providerName: 'Cursor' },
      async () => fresh,
    )
    const out = await tool.execute('1', { message: 'late' }, undefined, {})
    expect(out.content).toEqual([{ type: 'text', text: 'late' }])
    expect(out.details).toMatchObject({ serverName: 'd', provider: 'cursor', providerName: 'Cursor' })
    const controller = new AbortController()
    const [slow] = MCPTool.fromTools(fresh, [{ name: 'slow', inputSchema: { type: 'object' } }])
    const running = slow.execute('2', { ms: 5000 }, undefined, {}, controller.signal)
    controller.abort()
    await expect(running).rejects.toBeInstanceOf(ToolAbortError)
    await disconnectServer(fresh)
  })

  it('isRetriableConnectionError', () => {
    expect(isRetriableConnectionError(new Error('Transport closed'))).toBe(true)
    expect(isRetriableConnectionError(new Error('HTTP 503: unavailable'))).toBe(true)
    expect(isRetriableConnectionError(new Error('connect ECONNREFUSED 127.0.0.1:1'))).toBe(true)
    expect(isRetriableConnectionError(new Error('MCP error -32602: bad params'))).toBe(false)
    expect(isRetriableConnectionError('Transport closed')).toBe(false)
  })
})

describe('through the root manager', () => {
  it('the manager hands its reconnect to the tools: a call right after the server died comes back', async () => {
    const m = new MCPManager(ROOT, null)
    managers.push(m)
    await m.connectServers({ k: fixture() }, {}, undefined, 0)
    const echo = m.getTools().find((t) => t.name === 'mcp__k_echo')
    expect(echo).toBeInstanceOf(MCPTool)
    const pid = m.getConnection('k').transport.pid
    process.kill(pid, 'SIGKILL')
    await waitFor(() => m.getConnection('k')?.transport.pid !== pid || m.getConnectionStatus('k') !== 'connected')
    const out = await echo.execute('1', { message: 'back' }, undefined, {})
    expect(out.content).toEqual([{ type: 'text', text: 'back' }])
  })
})

describe('errors (18.3.4 errors.ts)', () => {
  it('classifies failures and says whether a retry is safe', () => {
    const at = { transport: 'http', stage: 'receive' }
    const pick = (e) => {
      const n = normalizeMCPTransportError(e, at)
      return [n.failure, n.stage, n.retryable, n.code]
    }
    expect(pick(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toEqual(['reset', 'receive', true, 'ECONNRESET'])
    expect(pick(new Error('connect ECONNREFUSED 127.0.0.1:9'))).toEqual(['connect', 'connect', true, undefined])
    expect(pick(new Error('HTTP 503: Service Unavailable'))).toEqual(['http_status', 'receive', true, 503])
    expect(pick(new Error('HTTP 401: Unauthorized'))).toEqual(['http_status', 'receive', false, 401])
    expect(pick(new SyntaxError('Unexpected token < in JSON'))).toEqual(['malformed_response', 'decode', false, undefined])
    expect(pick(new Error('Request timeout after 30000ms'))).toEqual(['timeout', 'receive', false, undefined])
    expect(pick(new Error('Transport closed'))).toEqual(['eof', 'receive', true, undefined])
    expect(pick('something odd')).toEqual(['unknown', 'receive', false, undefined])
    const wrapped = new Error('outer', { cause: Object.assign(new Error('inner'), { code: 'EPIPE' }) })
    expect(pick(wrapped)).toEqual(['eof', 'receive', true, 'EPIPE'])
    const same = new MCPTransportError({ transport: 'stdio', stage: 'send', failure: 'closed', message: 'gone', retryable: true })
    expect(normalizeMCPTransportError(same, at)).toBe(same)
  })

  it('redacts credentials from messages and data; bounds the data; finds a safe trace id', () => {
    const e = normalizeMCPTransportError(new Error('HTTP 401: Bearer sk-live-123 rejected for https://x/y?token=abc&q=1 api_key=zzz'), {
      transport: 'http',
      stage: 'send',
    })
    // The agent's rules in order: the query value, then the whole `token=…` run.
    expect(e.message).toBe('HTTP 401: Bearer [redacted] rejected for https://x/y?token=[redacted] api_key=[redacted]')
    const rpc = createMCPJsonRpcError('http', {
      code: -32000,
      message: 'denied',
      data: {
        client_secret: 's3cr3t',
        detail: 'Authorization: Bearer abc',
        nested: { requestId: 'req-42' },
        list: Array.from({ length: 40 }, (_, i) => i),
      },
    })
    expect(rpc.message).toBe('MCP error -32000: denied')
    expect(rpc.failure).toBe('json_rpc')
    expect(rpc.retryable).toBe(false)
    expect(rpc.traceId).toBe('req-42')
    const data = JSON.parse(rpc.data)
    expect(data.client_secret).toBe('[redacted]')
    expect(data.detail).toBe('Authorization: [redacted] [redacted]')
    expect(data.list).toHaveLength(30)
    const big = createMCPJsonRpcError('stdio', {
      code: 1,
      message: 'm',
      data: { text: 'x'.repeat(200), more: Array.from({ length: 30 }, () => 'y'.repeat(200)) },
    })
    expect(big.data.length).toBeLessThanOrEqual(2000)
    expect(JSON.parse(big.data).truncated).toBe(true)
    expect(mcpTraceIdFromHeaders(new Headers({ 'x-request-id': 'abc-123' }))).toBe('abc-123')
    expect(mcpTraceIdFromHeaders(new Headers({ 'x-request-id': 'has spaces' }))).toBeUndefined()
  })
})
