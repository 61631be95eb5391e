// Deadlines of connectToServer and of requests: `timeout: 0` is no deadline (a 600 ms handshake
// completes), a short one fails the connect with MCPConnectionTimeoutError, and a request slower
// than the server's timeout fails.
import { type Ctx, describeError, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const noDeadline = await settle(
    ctx.within('connect timeout 0', 10_000, client.connectToServer('zero', ctx.stdio(['--init-delay-ms=600'], { timeout: 0 }))),
  )
  if ('value' in noDeadline) ctx.defer(() => client.disconnectServer(noDeadline.value))
  const t0 = ctx.elapsed()
  let timedOut: unknown
  try {
    const conn = await ctx.within(
      'connect timeout 300',
      10_000,
      client.connectToServer('short', ctx.stdio(['--init-delay-ms=5000'], { timeout: 300 })),
    )
    ctx.defer(() => client.disconnectServer(conn))
    timedOut = 'connected'
  } catch (error) {
    timedOut = {
      error: describeError(error, ['serverName', 'timeoutMs']),
      isTimeoutClass: error instanceof client.MCPConnectionTimeoutError,
      within2s: ctx.elapsed() - t0 < 2000,
    }
  }
  const conn = await ctx.within('connect', 10_000, client.connectToServer('slowcall', ctx.stdio([], { timeout: 300 })))
  ctx.defer(() => client.disconnectServer(conn))
  const t1 = ctx.elapsed()
  const slowCall = await settle(ctx.within('slow call', 10_000, client.callTool(conn, 'slow', { ms: 3000 })))
  const slowCallWithin2s = ctx.elapsed() - t1 < 2000
  const after = await settle(ctx.within('echo after', 5000, client.callTool(conn, 'echo', { message: 'still there' })))
  return { noDeadline: 'value' in noDeadline ? 'connected' : noDeadline, timedOut, slowCall, slowCallWithin2s, after }
}
