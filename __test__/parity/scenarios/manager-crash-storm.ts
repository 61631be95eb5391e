// 15.7.5: a stdio server that keeps exiting after its handshake is reconnected at most 5 times in
// 30 s; then the breaker opens ("failed", automatic reconnects suspended; tools kept). A manual
// reconnect resets it.
import type { Agent, Ctx } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const events: Agent[] = []
  manager.addConnectionStatusListener((e: Agent) => events.push(e))
  await ctx.within('connectServers', 15_000, manager.connectServers({ crashy: ctx.stdio(['--exit-after-ms=600']) }, {}, undefined, 0))
  await ctx.waitFor('breaker', () => events.some((e) => e.type === 'failed'), 20_000)
  const afterBreaker = {
    status: manager.getConnectionStatus('crashy'),
    tools: manager.getTools().map((t: Agent) => t.name),
    connection: manager.getConnection('crashy') !== undefined,
  }
  const count = events.length
  const manual = await ctx.within('manual reconnect', 10_000, manager.reconnectServer('crashy', { manual: true }))
  const afterManual = { connected: manual !== null, status: manager.getConnectionStatus('crashy'), events: events.slice(count) }
  await ctx.within('disconnect', 5000, manager.disconnectServer('crashy'))
  return { events: events.slice(0, count), afterBreaker, afterManual }
}
