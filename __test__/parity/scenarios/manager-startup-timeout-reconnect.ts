// 18.1.5: a startup handshake that times out (MCPConnectionTimeoutError) is reported failed, then
// reconnecting, and the reconnect (the server answers at once the second time) connects it; the
// events through onStatus and the listener, and waitForStartup.
import type { Agent, Ctx } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const onStatus: unknown[] = []
  const listener: unknown[] = []
  manager.addConnectionStatusListener((e: unknown) => listener.push(e))
  const config = ctx.stdio([`--init-delay-once=${ctx.tmp}/slow-once`, '--init-delay-ms=3000'], { timeout: 400 })
  const result = await ctx.within(
    'connectServers',
    15_000,
    manager.connectServers({ flaky: config }, {}, (e: unknown) => onStatus.push(e), 0),
  )
  const startup = await ctx.within('waitForStartup', 15_000, manager.waitForStartup(10_000))
  await ctx.waitFor('connected', () => manager.getConnectionStatus('flaky') === 'connected', 8000).catch(() => false)
  return {
    result: { tools: result.tools.length, errors: result.errors, connectedServers: result.connectedServers },
    startup,
    status: manager.getConnectionStatus('flaky'),
    tools: manager.getTools().map((t: Agent) => t.name),
    onStatus,
    listener,
  }
}
