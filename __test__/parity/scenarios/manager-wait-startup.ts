// 18.3.0 (print mode): waitForStartup(ms) reports a server still handshaking as pending, one whose
// handshake failed as failed with its error, the others connected; waitForPendingConnections.
import type { Ctx } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const configs = {
    ok: ctx.stdio(),
    hang: ctx.stdio(['--init-hang'], { timeout: 0 }),
    refused: ctx.stdio(['--init-error']),
    slow: ctx.stdio(['--init-delay-ms=700']),
  }
  await ctx.within('connectServers', 15_000, manager.connectServers(configs, {}, undefined, 50))
  const t0 = ctx.elapsed()
  const early = await ctx.within('waitForStartup 300', 5000, manager.waitForStartup(300))
  const earlyBounded = ctx.elapsed() - t0 < 1500
  const later = await ctx.within('waitForStartup 3000', 8000, manager.waitForStartup(3000))
  await ctx.within('disconnect hang', 5000, manager.disconnectServer('hang'))
  const afterDisconnect = await ctx.within('waitForStartup 100', 5000, manager.waitForStartup(100))
  await ctx.within('waitForPendingConnections', 5000, manager.waitForPendingConnections())
  return {
    early,
    earlyBounded,
    later,
    afterDisconnect,
  }
}
