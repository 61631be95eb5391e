// json-rpc (11.4, 18.2.0): callMCP against the HTTP fixture: an SSE answer after notifications
// (the matching response picked), a JSON answer, a JSON-RPC error, an HTTP error (default message
// and onHttpError), an unparsable body and an SSE stream without the answer (onParseError), the
// request as sent (method, headers, body; the id is the caller's); readMcpJsonRpcResponse on
// hand-made responses; redactUrlForLog.
import { type Agent, type Ctx, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const rpc = await ctx.mod('mcp/json-rpc.ts')
  const { base } = await ctx.httpFixture()
  const sent: unknown[] = []
  const recording = async (url: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries())
    const body = JSON.parse(String(init?.body))
    sent.push({ method: init?.method, headers, body: { ...body, id: typeof body.id }, signal: init?.signal instanceof AbortSignal })
    return fetch(url, init)
  }
  const url = `${base}/mcp`
  const call = (method: string, params?: Record<string, unknown>, options: Record<string, unknown> = {}) =>
    settle(ctx.within(method, 10_000, rpc.callMCP(url, method, params, { fetch: recording, ...options })))
  // The body's length follows the random id's.
  const withoutLength = (r: Agent) => {
    if ('value' in r && r.value.result) delete r.value.result['content-length']
    return r
  }
  const withId = (r: Agent) => ('value' in r ? { value: { ...r.value, id: typeof r.value.id } } : r)
  const hooks = {
    onHttpError: (response: Response, body: string) => new Error(`hook http ${response.status}: ${body}`),
    onParseError: (error: unknown) => new Error(`hook parse: ${(error as Error).message}`),
  }
  const out: Record<string, unknown> = {
    sseAfterNotes: withId(await call('sse-echo', { notes: 3 })),
    sseMulti: withId(await call('sse-multi')),
    json: withId(await call('echo', { a: 1 })),
    noParams: withId(await call('echo')),
    rpcError: withId(await call('error', { code: -32602, message: 'bad params', data: { x: 1 } })),
    httpError: await call('http-error', { status: 503, body: 'down' }),
    httpErrorHook: await call('http-error', { status: 401, body: 'who?' }, hooks),
    notJson: await call('not-json'),
    notJsonHook: await call('not-json', undefined, hooks),
    sseNoAnswer: await call('sse-no-answer'),
    sseNoAnswerHook: await call('sse-no-answer', undefined, hooks),
    headers: withoutLength(withId(await call('headers', undefined, { headers: { 'X-Extra': 'yes', Accept: 'application/json' } }))),
    aborted: await settle(ctx.within('aborted', 5000, rpc.callMCP(url, 'echo', {}, { fetch: recording, signal: AbortSignal.abort() }))),
  }
  const read = (body: string, type: string, id: string | number) =>
    settle(ctx.within('read', 5000, rpc.readMcpJsonRpcResponse(new Response(body, { headers: { 'content-type': type } }), id)))
  const sse = (...messages: unknown[]) => messages.map((m) => `data: ${typeof m === 'string' ? m : JSON.stringify(m)}\n\n`).join('')
  out.read = {
    jsonMatch: await read(JSON.stringify({ jsonrpc: '2.0', id: 7, result: { ok: 1 } }), 'application/json', 7),
    jsonBatch: await read(
      JSON.stringify([
        { jsonrpc: '2.0', method: 'n' },
        { jsonrpc: '2.0', id: 'a', result: 2 },
      ]),
      'application/json',
      'a',
    ),
    jsonOtherId: await read(JSON.stringify({ jsonrpc: '2.0', id: 8, result: {} }), 'application/json', 7),
    jsonNumberVsString: await read(JSON.stringify({ jsonrpc: '2.0', id: '7', result: {} }), 'application/json', 7),
    jsonMalformed: await read(JSON.stringify({ id: 7, result: {} }), 'application/json', 7),
    jsonBothResultAndError: await read(
      JSON.stringify({ jsonrpc: '2.0', id: 7, result: {}, error: { code: 1, message: 'x' } }),
      'application/json',
      7,
    ),
    jsonBadError: await read(JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: 'x', message: 1 } }), 'application/json', 7),
    jsonErrorData: await read(
      JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -1, message: 'm', data: [1] } }),
      'application/json',
      7,
    ),
    jsonNoMatch: await read(JSON.stringify({ jsonrpc: '2.0', method: 'note' }), 'application/json', 7),
    sseSkips: await read(
      sse(
        { jsonrpc: '2.0', method: 'n', params: {} },
        { jsonrpc: '2.0', id: 'req', method: 'ping' },
        { jsonrpc: '2.0', id: 6, result: 0 },
        { jsonrpc: '2.0', id: 7, result: 'mine' },
      ),
      'text/event-stream',
      7,
    ),
    sseEmptyAndDone: await read(`data: \n\n${sse('[DONE]')}${sse({ jsonrpc: '2.0', id: 7, result: 1 })}`, 'text/event-stream', 7),
    sseBadJson: await read(sse('{nope'), 'text/event-stream', 7),
    sseBadRequest: await read(sse({ jsonrpc: '2.0', method: 'n', params: 3 }), 'text/event-stream', 7),
    sseUpperType: await read(sse({ jsonrpc: '2.0', id: 7, result: 'upper' }), 'Text/Event-Stream; charset=utf-8', 7),
  }
  out.redact = [
    rpc.redactUrlForLog('https://mcp.example.test/mcp?exaApiKey=abc&x=1&token=t&AUTHorization=z'),
    rpc.redactUrlForLog('not a url?key=secret'),
    rpc.redactUrlForLog('https://mcp.example.test/plain'),
  ]
  out.sent = sent
  return out
}
