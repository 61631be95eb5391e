// 15.8.1: a server that closes its stdin between `initialize` and `notifications/initialized`
// (EPIPE on the notification) fails the connect, promptly.
import { type Ctx, describeError } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const t0 = ctx.elapsed()
  try {
    const conn = await ctx.within('connect', 10_000, client.connectToServer('epipe', ctx.stdio(['--init-closes-stdin'])))
    ctx.defer(() => client.disconnectServer(conn))
    return { connected: true }
  } catch (error) {
    return { connected: false, error: describeError(error), within3s: ctx.elapsed() - t0 < 3000 }
  }
}
