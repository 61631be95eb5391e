// connectToServer over Streamable HTTP (the fixture on 127.0.0.1:0, behind a recording proxy):
// the requests the server received in order (methods, the headers of the protocol, session ids),
// tools/list, a JSON and an SSE tools/call, a JSON-RPC error, and the session DELETE at close.
import { type Ctx, httpFrames, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const { base } = await ctx.httpFixture()
  const proxy = await ctx.proxy(base)
  const conn = await ctx.within(
    'connect',
    10_000,
    client.connectToServer('web', { type: 'http', url: `${proxy.base}/mcp`, headers: { 'X-Parity': 'yes' } }),
  )
  let closed = false
  ctx.defer(() => (closed ? undefined : client.disconnectServer(conn)))
  const tools = await settle(ctx.within('tools', 5000, client.listTools(conn)))
  const echo = await settle(ctx.within('echo', 5000, client.callTool(conn, 'echo', { message: 'json' })))
  const echoSse = await settle(ctx.within('echo-sse', 5000, client.callTool(conn, 'echo-sse', { message: 'sse' })))
  const notes = await settle(ctx.within('sse-echo', 5000, conn.transport.request('sse-echo', { notes: 2 })))
  const rpcError = await settle(ctx.within('error', 5000, conn.transport.request('error', { code: -32001, message: 'nope' })))
  await ctx.within('close', 5000, client.disconnectServer(conn))
  closed = true
  await ctx.waitFor('DELETE', () => proxy.frames.some((f) => f.method === 'DELETE'), 3000).catch(() => false)
  // A config's own MCP-Protocol-Version is not sent (the negotiated one is), the generated
  // session header wins over a configured one; requestIdFormat "string" sends string ids.
  const proxy2 = await ctx.proxy(base)
  const strung = await ctx.within(
    'connect string ids',
    10_000,
    client.connectToServer('web2', {
      type: 'http',
      url: `${proxy2.base}/mcp`,
      requestIdFormat: 'string',
      headers: { 'MCP-Protocol-Version': '1999-01-01', 'mcp-session-id': 'configured', Accept: 'text/plain' },
    }),
  )
  ctx.defer(() => client.disconnectServer(strung))
  const echo2 = await settle(ctx.within('echo string id', 5000, client.callTool(strung, 'echo', { message: 'string id' })))
  return {
    echo2,
    frames2: httpFrames(proxy2.frames),
    connection: { name: conn.name, serverInfo: conn.serverInfo, capabilities: conn.capabilities },
    tools,
    echo,
    echoSse,
    notes,
    rpcError,
    frames: httpFrames(proxy.frames),
  }
}
