// The agent's pure helpers of SPEC 11.2's modules, over many inputs: tool naming (digits kept,
// server prefix stripped, 64-character cap with Bun.hash, legacy names), canonical candidates and
// alias resolution, origin keys, deduplication with a stable winner (17.1.6), retriable errors,
// failure text, JSON-RPC errors, timeouts, request ids, startup-event formatting.
import type { Ctx } from '../harness.ts'

const serverNames = ['fx', 'Srv-9', 'my.server', 'puppeteer', '123', '', 'a__b', 'x'.repeat(80), 'Ünïcode', 'srv_9']
const toolNames = ['echo', 'puppeteer_screenshot', 'srv_9_lookup', 'Tool2Go', 'weird name!', '', '42', 'y'.repeat(70), 'a-b-c']

export default async function (ctx: Ctx) {
  const bridge = await ctx.mod('mcp/tool-bridge.ts')
  const errors = await ctx.mod('mcp/errors.ts')
  const timeout = await ctx.mod('mcp/timeout.ts')
  const ids = await ctx.mod('mcp/request-id.ts')
  const events = await ctx.mod('mcp/startup-events.ts')
  const names: Record<string, unknown> = {}
  for (const s of serverNames)
    for (const t of toolNames) names[`${s}|${t}`] = [bridge.createMCPToolName(s, t), bridge.createLegacyMCPToolName(s, t)]
  const candidates = Object.fromEntries(
    [
      'mcp__fx__echo',
      'mcp__seedpatch-client__bank',
      'mcp__fx_echo',
      'mcp__a__b__c',
      'echo',
      'mcp__',
      'mcp____x',
      `mcp__${'z'.repeat(70)}`,
      'mcp__puppeteer__puppeteer_screenshot',
    ].map((n) => [n, bridge.canonicalMCPToolNameCandidates(n)]),
  )
  const registry = new Map([
    ['mcp__fx_echo', { name: 'mcp__fx_echo' }],
    ['mcp__seedpatch_client_bank', { name: 'mcp__seedpatch_client_bank' }],
  ])
  const alias = Object.fromEntries(
    ['mcp__fx__echo', 'mcp__seedpatch-client__bank', 'mcp__nope__x', 'fx_echo'].map((n) => [
      n,
      bridge.resolveMCPToolAlias(n, (c: string) => registry.get(c))?.name ?? null,
    ]),
  )
  const tools = [
    { name: 'mcp__a_b_x', mcpServerName: 'a-b', mcpToolName: 'x' },
    { name: 'mcp__a_b_x', mcpServerName: 'a_b', mcpToolName: 'x' },
    { name: 'plain' },
    { name: 'mcp__a_b_x', mcpServerName: 'a-b', mcpToolName: 'x' },
  ]
  const dedupe = [bridge.deduplicateMCPToolsByName(tools), bridge.deduplicateMCPToolsByName([...tools].reverse())]
  const transportError = (failure: string, code?: unknown, retryable = true) =>
    new errors.MCPTransportError({ transport: 'http', stage: 'receive', failure, message: `m ${failure}`, retryable, code })
  const retriable = [
    new Error('connect ECONNREFUSED 127.0.0.1:1'),
    new Error('HTTP 404: gone'),
    new Error('HTTP 500: boom'),
    new Error('Transport closed'),
    new Error('something else'),
    'not an error',
    transportError('connect'),
    transportError('eof', undefined, false),
    transportError('http_status', 503),
    transportError('http_status', 500),
    transportError('timeout'),
  ].map((e) => bridge.isRetriableConnectionError(e))
  const failures = [
    new Error('connect ECONNREFUSED 127.0.0.1:9'),
    new Error('Request timed out after 30000ms'),
    new Error('HTTP 503: Service Unavailable'),
    Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    new SyntaxError('Unexpected end of JSON input'),
    new Error('Bearer abc.def token=xyz in message'),
    errors.createMCPJsonRpcError('stdio', {
      code: -32000,
      message: 'tool exploded',
      data: { token: 's3cret', requestId: 'req-42', list: [1, 2] },
    }),
    'a string',
  ].map((e) => errors.formatMCPToolFailure(e, 'srv', 'tool'))
  const jsonRpcError = errors.createMCPJsonRpcError('http', { code: -32602, message: 'bad', data: { password: 'p', ok: 'y' } }, 'trace-1')
  const normalized = [new Error('fetch failed'), new Error('x timed out'), { code: 'EPIPE' }].map((e) => {
    const n = errors.normalizeMCPTransportError(e, { transport: 'stdio', stage: 'send' })
    return {
      name: n.name,
      message: n.message,
      transport: n.transport,
      stage: n.stage,
      failure: n.failure,
      retryable: n.retryable,
      code: n.code,
    }
  })
  const timeouts = {
    resolve: [undefined, 0, 1500, -1, Number.NaN].map((v) => timeout.resolveMCPTimeoutMs(v)),
    startup: [undefined, 0, 100, -5].map((v) => timeout.resolveMCPStartupTimeoutMs(v)),
    enabled: [0, 1, 30_000].map((v) => timeout.isMCPTimeoutEnabled(v)),
    describe: [0, 1, 999, 1000, 1500, 30_000, 90_000].map((v) => timeout.describeMCPTimeout(v)),
    never: timeout.getNeverAbortSignal().aborted,
  }
  const allocator = new ids.RequestIdAllocator()
  const idSeq = [allocator.next(undefined), allocator.next('number'), allocator.next(undefined)]
  const stringId = new ids.RequestIdAllocator().next('string')
  return {
    names,
    candidates,
    alias,
    originKeys: tools.map((t) => bridge.getMCPToolOriginKey(t) ?? null),
    dedupe,
    retriable,
    failures,
    jsonRpcError: {
      name: jsonRpcError.name,
      message: jsonRpcError.message,
      code: jsonRpcError.code,
      data: jsonRpcError.data,
      traceId: jsonRpcError.traceId,
      failure: jsonRpcError.failure,
    },
    normalized,
    timeouts,
    ids: { idSeq, stringIdType: typeof stringId, stringIdShape: /^\d+$/.test(String(stringId)) },
    startupEvents: {
      connecting: events.formatMCPConnectingMessage(['a', 'b']),
      isEvent: [{ type: 'connected', serverName: 'a' }, { type: 'x' }, null].map((e) => events.isMcpConnectionStatusEvent(e)),
    },
  }
}
