// SPEC 11.3 "errors": at the package root, every failure the function API, a connection's
// transport and the tool objects surface is the one the agent's 18.3.4 transports surface in the
// same situation (`MCPTransportError` with its transport, stage, failure class, retryable flag,
// code, redacted data and trace id; the package's own string code kept where 18.3.4 sets none, its
// other members kept, the package's error as `cause`); the 12.7 profile keeps today's plain
// `Error`s. Fixture servers on stdio and Streamable HTTP. vitest (Node) and `bun test` (Bun).
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import {
  MCPConnectionTimeoutError,
  callTool,
  connectToServer,
  disconnectServer,
  getPrompt,
  listResources,
  listTools,
} from 'mcp-native/client'
import * as compat from 'mcp-native/compat-12.7/client'
import { MCPTransportError, formatMCPToolFailure } from 'mcp-native/errors'
import { MCPTool } from 'mcp-native/tool-bridge'
import { ROOT, fixture, settle, startHttpFixture } from './helpers.mjs'

const require = createRequire(import.meta.url)
/** The root's mapping, for the manager's texts (lib/root-errors.js, internal). */
const { agentConnectFailureText } = require(join(ROOT, 'lib', 'root-errors.js'))

const open = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => disconnectServer(c).catch(() => {})))
})
async function connect(connectWith, ...args) {
  const c = await connectWith(...args)
  open.push(c)
  return c
}
/** The facts of an MCPTransportError the agent reads. */
const facts = (e) => ({
  name: e.name,
  message: e.message,
  transport: e.transport,
  stage: e.stage,
  failure: e.failure,
  retryable: e.retryable,
  code: e.code,
  data: e.data,
  traceId: e.traceId,
})
const posix = process.platform !== 'win32'

let http
beforeAll(async () => {
  http = await startHttpFixture()
})
afterAll(() => {
  http?.child.kill()
})

describe('stdio at the root (18.3.4 transports/stdio.ts)', () => {
  it('a JSON-RPC error answer is createMCPJsonRpcError-shaped: code = the JSON-RPC code, data redacted JSON, trace id from it; rpcCode stays', async () => {
    const c = await connect(connectToServer, 'fx', fixture())
    const { error } = await settle(
      c.transport.request('error', { code: -32042, message: 'custom failure', data: { hint: 'x', token: 'abc', traceId: 't-1' } }),
    )
    expect(error).toBeInstanceOf(MCPTransportError)
    expect(facts(error)).toEqual({
      name: 'MCPTransportError',
      message: 'MCP error -32042: custom failure',
      transport: 'stdio',
      stage: 'protocol',
      failure: 'json_rpc',
      retryable: false,
      code: -32042,
      data: '{"hint":"x","token":"[redacted]","traceId":"t-1"}',
      traceId: 't-1',
    })
    expect(error.rpcCode).toBe(-32042)
    expect(error.cause).toMatchObject({ message: 'MCP error -32042: custom failure', code: 'MCP_RPC_ERROR' })
    // Through the function API: tools/list answered with an error.
    await c.transport.request('fail-tools-list')
    const listed = await settle(listTools(c))
    expect(facts(listed.error)).toMatchObject({
      message: 'MCP error -32000: list failed',
      failure: 'json_rpc',
      code: -32000,
      transport: 'stdio',
    })
    const unknown = await settle(c.transport.request('no/such/method'))
    expect(facts(unknown.error)).toMatchObject({
      message: 'MCP error -32601: Method not found: no/such/method',
      code: -32601,
      stage: 'protocol',
    })
  })

  it('a request that outlives the timeout (config timeout: 300) is 18.3.4’s timeout at `receive`; the package code stays', async () => {
    const c = await connect(connectToServer, 'slow', fixture([], { timeout: 300 }))
    const started = Date.now()
    const { error } = await settle(callTool(c, 'slow', { ms: 3000 }))
    expect(Date.now() - started).toBeLessThan(2000)
    expect(error).toBeInstanceOf(MCPTransportError)
    expect(facts(error)).toEqual({
      name: 'MCPTransportError',
      message: 'Request timeout after 300ms',
      transport: 'stdio',
      stage: 'receive',
      failure: 'timeout',
      retryable: false,
      code: 'MCP_TIMEOUT',
      data: undefined,
      traceId: undefined,
    })
    expect(error.timeout).toBe(300)
    // The connect deadline stays MCPConnectionTimeoutError.
    const hung = await settle(connectToServer('hung', fixture(['--init-hang'], { timeout: 300 })))
    expect(hung.error).toBeInstanceOf(MCPConnectionTimeoutError)
    expect(hung.error.message).toBe('Connection to MCP server "hung" timed out after 300ms')
  })

  it('a server that exits under pending requests: "MCP subprocess closed stdout before responding" (eof); then "Transport not connected" (closed)', async () => {
    const c = await connect(connectToServer, 'crash', fixture())
    const { error } = await settle(c.transport.request('crash', { code: 3, stderr: 'dying\n' }))
    expect(facts(error)).toEqual({
      name: 'MCPTransportError',
      message: 'MCP subprocess closed stdout before responding',
      transport: 'stdio',
      stage: 'receive',
      failure: 'eof',
      retryable: true,
      code: 'MCP_TRANSPORT_CLOSED',
      data: undefined,
      traceId: undefined,
    })
    // The package's account of the exit stays on the error.
    expect(error).toMatchObject({ exitCode: 3, stderr: 'dying\n' })
    expect(error.cause).toMatchObject({ message: 'Transport closed', code: 'MCP_TRANSPORT_CLOSED' })
    const notConnected = {
      name: 'MCPTransportError',
      message: 'Transport not connected',
      transport: 'stdio',
      stage: 'connect',
      failure: 'closed',
      retryable: true,
      code: 'MCP_NOT_CONNECTED',
    }
    expect(facts((await settle(callTool(c, 'echo', {}))).error)).toMatchObject(notConnected)
    expect(facts((await settle(c.transport.notify('x/y'))).error)).toMatchObject(notConnected)
    expect(facts((await settle(listResources(c))).error)).toMatchObject({ ...notConnected, code: 'MCP_TRANSPORT_CLOSED' })
    // An exit on the server's own schedule, a call pending.
    const late = await connect(connectToServer, 'late', fixture(['--exit-after-ms=300']))
    const pending = await settle(callTool(late, 'slow', { ms: 5000 }))
    expect(facts(pending.error)).toMatchObject({ message: 'MCP subprocess closed stdout before responding', failure: 'eof' })
  })

  it('closed by the caller under a pending request: "Transport closed" (closed, retryable)', async () => {
    const c = await connectToServer('mine', fixture())
    const pending = settle(c.transport.request('delay', { ms: 3000 }))
    await disconnectServer(c)
    expect(facts((await pending).error)).toMatchObject({
      message: 'Transport closed',
      failure: 'closed',
      stage: 'receive',
      retryable: true,
    })
  })

  it('15.8.1: EPIPE between initialize and notifications/initialized is 18.3.4’s notification failure', async () => {
    const { error } = await settle(connectToServer('p', fixture(['--init-closes-stdin'], { timeout: 5000, killGraceMs: 200 })))
    expect(error).toBeInstanceOf(MCPTransportError)
    expect(facts(error)).toEqual({
      name: 'MCPTransportError',
      message: 'Transport closed while sending notification "notifications/initialized"',
      transport: 'stdio',
      stage: 'send',
      failure: 'eof',
      retryable: true,
      code: 'MCP_IO_ERROR',
      data: undefined,
      traceId: undefined,
    })
    expect(error.cause.message).toBe('write EPIPE')
  })

  it.skipIf(!posix)(
    'a failed spawn reads as Bun.spawn’s (18.3.4 on Bun): posix_spawn for a path, "Executable not found in $PATH" for a name',
    async () => {
      const path = join(ROOT, 'no-such-dir', 'no-such-command')
      const { error } = await settle(connectToServer('missing', { command: path }))
      expect(error).toBeInstanceOf(MCPTransportError)
      expect(facts(error)).toEqual({
        name: 'MCPTransportError',
        message: `ENOENT: no such file or directory, posix_spawn '${path}'`,
        transport: 'stdio',
        stage: 'connect',
        failure: 'unknown',
        retryable: false,
        code: 'ENOENT',
        data: undefined,
        traceId: undefined,
      })
      expect(error.cause).toMatchObject({ message: `spawn ${path} ENOENT`, code: 'ENOENT' })
      const bare = await settle(connectToServer('bare', { command: 'mcp-native-no-such-command' }))
      expect(facts(bare.error)).toMatchObject({
        message: 'Executable not found in $PATH: "mcp-native-no-such-command"',
        code: 'ENOENT',
        stage: 'connect',
        failure: 'unknown',
      })
      const denied = await settle(connectToServer('denied', { command: ROOT }))
      expect(facts(denied.error)).toMatchObject({ message: `EACCES: permission denied, posix_spawn '${ROOT}'`, code: 'EACCES' })
      // The manager's texts (its `errors`, `failed` events, waitForStartup) from the package's.
      expect(agentConnectFailureText(`spawn ${path} ENOENT`, { command: path })).toBe(
        `ENOENT: no such file or directory, posix_spawn '${path}'`,
      )
      expect(agentConnectFailureText('spawn node ENOENT', { command: 'node' })).toBe(
        "ENOENT: no such file or directory, posix_spawn 'node'",
      )
      expect(agentConnectFailureText('spawn nope ENOENT', { command: 'nope', env: { PATH: '/nonexistent' } })).toBe(
        'Executable not found in $PATH: "nope"',
      )
      expect(agentConnectFailureText('write EPIPE', {})).toBe('Transport closed while sending notification "notifications/initialized"')
      expect(agentConnectFailureText('Transport closed', {})).toBe('MCP subprocess closed stdout before responding')
      expect(agentConnectFailureText('MCP error -32603: initialize refused', {})).toBe('MCP error -32603: initialize refused')
    },
  )

  it('what is not a transport error of the package passes as it is (an abort reason)', async () => {
    const c = await connect(connectToServer, 'abort', fixture())
    const reason = new Error('mine')
    const { error } = await settle(c.transport.request('delay', { ms: 2000 }, { signal: AbortSignal.abort(reason) }))
    expect(error).toBe(reason)
  })
})

describe('Streamable HTTP at the root (18.3.4 transports/http.ts)', () => {
  const web = (extra = {}) => ({ type: 'http', url: `${http.base}/mcp`, ...extra })

  it('HTTP statuses: code = the status, stage receive, retryable for 404/502/503; auth hints kept, credentials redacted', async () => {
    const c = await connect(connectToServer, 'web', web())
    const cases = [
      [401, 'HTTP 401: nope [WWW-Authenticate: Bearer [redacted]; Mcp-Auth-Server: https://as.example]', false],
      [403, 'HTTP 403: nope', false],
      [404, 'HTTP 404: nope', true],
      [500, 'HTTP 500: nope', false],
      [503, 'HTTP 503: nope', true],
    ]
    for (const [status, message, retryable] of cases) {
      const params = { status, body: 'nope' }
      if (status === 401) Object.assign(params, { wwwAuthenticate: 'Bearer realm="x"', authServer: 'https://as.example' })
      const { error } = await settle(c.transport.request('http-error', params))
      expect(error).toBeInstanceOf(MCPTransportError)
      expect(facts(error)).toEqual({
        name: 'MCPTransportError',
        message,
        transport: 'http',
        stage: 'receive',
        failure: 'http_status',
        retryable,
        code: status,
        data: undefined,
        traceId: undefined,
      })
      expect(error.status).toBe(status)
    }
    const notify = await settle(c.transport.notify('fail/notify'))
    expect(facts(notify.error)).toMatchObject({ message: 'HTTP 500: {"error":"nope"}', failure: 'http_status', code: 500 })
  })

  it('a JSON-RPC error answer: http transport, data redacted, trace id from it; -32601 from the function API', async () => {
    const c = await connect(connectToServer, 'web', web())
    const { error } = await settle(
      c.transport.request('error', { code: -32001, message: 'bad', data: { requestId: 'r-1', password: 'p' } }),
    )
    expect(facts(error)).toEqual({
      name: 'MCPTransportError',
      message: 'MCP error -32001: bad',
      transport: 'http',
      stage: 'protocol',
      failure: 'json_rpc',
      retryable: false,
      code: -32001,
      data: '{"requestId":"r-1","password":"[redacted]"}',
      traceId: 'r-1',
    })
    const prompt = await settle(getPrompt(c, 'x'))
    expect(facts(prompt.error)).toMatchObject({
      message: 'MCP error -32601: Method not found: prompts/get',
      code: -32601,
      transport: 'http',
    })
  })

  it('timeouts: before the answer’s headers at `send`, an SSE answer that never brings the result at `receive`', async () => {
    const c = await connect(connectToServer, 'web', web({ timeout: 300 }))
    const slow = await settle(c.transport.request('slow-headers', { ms: 2000 }))
    expect(facts(slow.error)).toMatchObject({
      message: 'Request timeout after 300ms',
      stage: 'send',
      failure: 'timeout',
      retryable: false,
      code: 'MCP_TIMEOUT',
    })
    const hang = await settle(c.transport.request('sse-hang'))
    expect(facts(hang.error)).toMatchObject({
      message: 'Request timeout after 300ms',
      stage: 'receive',
      failure: 'timeout',
      transport: 'http',
    })
    expect(hang.error.cause.message).toBe('SSE response timeout after 300ms')
    const cut = await settle(c.transport.request('sse-no-answer'))
    expect(facts(cut.error)).toMatchObject({ failure: 'eof', stage: 'receive', retryable: false })
    expect(cut.error.message).toMatch(/^No response received for request ID \d+$/)
  })

  it('a refused connection reads as Bun’s fetch (code ConnectionRefused), retryable at `connect`; the legacy SSE transport keeps plain Errors', async () => {
    const { error } = await settle(connectToServer('off', { type: 'http', url: 'http://127.0.0.1:1/mcp', timeout: 2000 }))
    expect(facts(error)).toMatchObject({
      name: 'MCPTransportError',
      message: 'Unable to connect. Is the computer able to access the url?',
      transport: 'http',
      stage: 'connect',
      failure: 'connect',
      retryable: true,
      code: 'ConnectionRefused',
    })
    const legacy = await settle(connectToServer('off', { type: 'sse', url: 'http://127.0.0.1:1/sse', timeout: 2000 }))
    expect(legacy.error).not.toBeInstanceOf(MCPTransportError)
    expect(legacy.error).toMatchObject({ message: 'Unable to connect. Is the computer able to access the url?', code: 'ConnectionRefused' })
  })
})

describe('tool objects at the root (18.3.4 tool-bridge.ts + formatMCPToolFailure)', () => {
  it('a timeout and a server that is gone: the transport, stage, failure and next step of 18.3.4; no line for the package’s code', async () => {
    const c = await connect(connectToServer, 'fx', fixture([], { timeout: 300 }))
    const tools = MCPTool.fromTools(c, await listTools(c))
    const tool = (name) => tools.find((t) => t.mcpToolName === name)
    const slow = await tool('slow').execute('1', { ms: 3000 }, undefined, {})
    expect(slow.isError).toBe(true)
    expect(slow.content[0].text).toBe(
      [
        'MCP failure',
        'server: fx',
        'tool: slow',
        'transport: stdio',
        'stage: receive',
        'failure: timeout',
        'retryable: no',
        'message: Request timeout after 300ms',
        'next: Check server health or increase the MCP timeout; the request outcome is unknown.',
      ].join('\n'),
    )
    await settle(c.transport.request('crash', { code: 3 }))
    const gone = await tool('echo').execute('2', { message: 'x' }, undefined, {})
    expect(gone.content[0].text).toBe(
      [
        'MCP failure',
        'server: fx',
        'tool: echo',
        'transport: stdio',
        'stage: connect',
        'failure: closed',
        'retryable: yes',
        'message: Transport not connected',
        'next: Reconnect the MCP server, then retry.',
      ].join('\n'),
    )
  })

  it('over HTTP: the status is the code line', async () => {
    const c = await connect(connectToServer, 'web', { type: 'http', url: `${http.base}/mcp` })
    const { error } = await settle(c.transport.request('http-error', { status: 500, body: 'down' }))
    expect(formatMCPToolFailure(error, 'web', 'echo')).toBe(
      [
        'MCP failure',
        'server: web',
        'tool: echo',
        'transport: http',
        'stage: receive',
        'failure: http_status',
        'retryable: no',
        'message: HTTP 500: down',
        'code: 500',
        'next: Check the MCP endpoint and authentication configuration.',
      ].join('\n'),
    )
  })
})

describe('the 12.7 profile keeps today’s errors (SPEC 1–5)', () => {
  it('plain Errors with the package’s messages and string codes', async () => {
    const c = await connect(compat.connectToServer, 'old', fixture([], { timeout: 300 }))
    const rpc = (await settle(c.transport.request('error', { code: -32042, message: 'custom failure', data: { hint: 'x' } }))).error
    expect(rpc).not.toBeInstanceOf(MCPTransportError)
    expect(rpc).toMatchObject({
      name: 'Error',
      message: 'MCP error -32042: custom failure',
      code: 'MCP_RPC_ERROR',
      rpcCode: -32042,
      data: { hint: 'x' },
    })
    const slow = (await settle(compat.callTool(c, 'slow', { ms: 3000 }))).error
    expect(slow).not.toBeInstanceOf(MCPTransportError)
    expect(slow).toMatchObject({ name: 'Error', message: 'Request timeout after 300ms', code: 'MCP_TIMEOUT' })
    const crash = (await settle(c.transport.request('crash', { code: 3 }))).error
    expect(crash).toMatchObject({ name: 'Error', message: 'Transport closed', code: 'MCP_TRANSPORT_CLOSED', exitCode: 3 })
    const after = (await settle(compat.callTool(c, 'echo', {}))).error
    expect(after).toMatchObject({ name: 'Error', message: 'Transport not connected', code: 'MCP_NOT_CONNECTED' })
    const epipe = (await settle(compat.connectToServer('p', fixture(['--init-closes-stdin'], { timeout: 5000, killGraceMs: 200 })))).error
    expect(epipe).toMatchObject({ name: 'Error', message: 'write EPIPE' })
    const web = await connect(compat.connectToServer, 'web', { type: 'http', url: `${http.base}/mcp` })
    const status = (await settle(web.transport.request('http-error', { status: 500, body: 'nope' }))).error
    expect(status).not.toBeInstanceOf(MCPTransportError)
    expect(status).toMatchObject({ name: 'Error', message: 'HTTP 500: nope', code: 'MCP_HTTP_ERROR', status: 500 })
  })

  it.skipIf(!posix)('a failed spawn is `spawn <command> ENOENT`', async () => {
    const { error } = await settle(compat.connectToServer('missing', { command: 'mcp-native-no-such-command' }))
    expect(error).not.toBeInstanceOf(MCPTransportError)
    expect(error).toMatchObject({ message: 'spawn mcp-native-no-such-command ENOENT', code: 'ENOENT' })
  })
})
