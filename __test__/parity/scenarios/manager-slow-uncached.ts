// 15.10.7 / 17.1.0: a server without cached tools that answers slowly does not hold up
// connectServers past the startup window; its tools arrive later through setOnToolsChanged;
// waitForStartup then reports it connected.
import { type Agent, type Ctx, describeTool } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const changes: string[][] = []
  manager.setOnToolsChanged((tools: Array<{ name: string }>) => {
    changes.push(tools.map((t) => t.name).filter((n) => n.endsWith('_echo')))
  })
  const events: unknown[] = []
  const t0 = ctx.elapsed()
  const result = await ctx.within(
    'connectServers',
    15_000,
    manager.connectServers({ fast: ctx.stdio(), slow: ctx.stdio(['--init-delay-ms=2000']) }, {}, (e: unknown) => events.push(e), 300),
  )
  const returnedBeforeSlow = ctx.elapsed() - t0 < 1500
  const atReturn = {
    tools: result.tools.map((t: Agent) => t.name).filter((n: string) => n.endsWith('_echo')),
    errors: result.errors,
    connectedServers: result.connectedServers,
    status: { fast: manager.getConnectionStatus('fast'), slow: manager.getConnectionStatus('slow') },
  }
  const startup = await ctx.within('waitForStartup', 10_000, manager.waitForStartup(8000))
  return {
    returnedBeforeSlow,
    atReturn,
    startup,
    changes,
    events,
    slowTools: manager
      .getTools()
      .filter((t: Agent) => t.mcpServerName === 'slow')
      .map(describeTool),
  }
}
