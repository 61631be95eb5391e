// reconnectServer: concurrent calls share one attempt; tools stay while reconnecting; a manual
// reconnect; a server that exits is reconnected on its own (reconnecting, then connected) and its
// tool objects keep working.
import { type Agent, type Ctx, describeResult, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const events: unknown[] = []
  manager.addConnectionStatusListener((e: unknown) => events.push(e))
  await ctx.within('connectServers', 15_000, manager.connectServers({ fx: ctx.stdio() }, {}, undefined, 0))
  const first = manager.getConnection('fx')
  const toolsBefore = manager.getTools().map((t: Agent) => t.name)
  const a = manager.reconnectServer('fx', { manual: true })
  const b = manager.reconnectServer('fx')
  const duringStatus = manager.getConnectionStatus('fx')
  const toolsDuring = manager.getTools().map((t: Agent) => t.name)
  const [ca, cb] = await ctx.within('reconnect', 10_000, Promise.all([a, b]))
  const shared = ca === cb && ca !== null
  const replaced = ca !== first && manager.getConnection('fx') === ca
  events.push('--- server exits ---')
  await settle(ctx.within('crash', 5000, manager.getConnection('fx').transport.request('crash', { code: 3 })))
  await ctx.waitFor('reconnected', () => manager.getConnection('fx') && manager.getConnection('fx') !== ca, 10_000)
  const echo = manager.getTools().find((t: Agent) => t.mcpToolName === 'echo')
  const afterCrash = await settle(
    ctx
      .within('echo', 10_000, echo.execute('call-1', { message: 'back' }, undefined, { sessionManager: { getCwd: () => ctx.project } }))
      .then(describeResult),
  )
  return {
    toolsBefore,
    duringStatus,
    toolsDuring,
    shared,
    replaced,
    toolsAfter: manager.getTools().map((t: Agent) => t.name),
    afterCrash,
    status: manager.getConnectionStatus('fx'),
    events,
  }
}
