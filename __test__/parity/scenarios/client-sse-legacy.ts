// `type: "sse"` is the legacy HTTP+SSE transport (2024-11-05): GET /sse names the POST endpoint,
// answers travel on the stream (the HTTP fixture's legacy mode, behind the recording proxy).
import { type Agent, type Ctx, httpFrames, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const { base } = await ctx.httpFixture()
  const proxy = await ctx.proxy(base)
  const notes: unknown[] = []
  // The fixture's note names the request id it precedes: its type is kept, not its value.
  const onNotification = (method: string, params: Agent) => notes.push({ method, params: { ...params, before: typeof params?.before } })
  const connected = await settle(
    ctx.within('connect', 10_000, client.connectToServer('legacy', { type: 'sse', url: `${proxy.base}/sse` }, { onNotification })),
  )
  if (!('value' in connected)) return { connected }
  const conn = connected.value as Agent
  ctx.defer(() => client.disconnectServer(conn))
  const echo = await settle(ctx.within('echo', 5000, conn.transport.request('echo', { said: 'hi' })))
  const missing = await settle(ctx.within('missing', 5000, conn.transport.request('nothing/here', {})))
  return {
    connection: { name: conn.name, serverInfo: conn.serverInfo, capabilities: conn.capabilities },
    echo,
    missing,
    notes,
    frames: httpFrames(proxy.frames.filter((f) => f.method !== 'GET' || f.path === '/sse')),
  }
}
