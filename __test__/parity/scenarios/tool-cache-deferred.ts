// The tool cache (AgentStorage, injected): a first manager caches a server's tools; a second one,
// whose server is still handshaking when the startup window closes, stands in the cached tools as
// DeferredMCPTool objects, which wait for the connection when executed.
import { type Agent, type Ctx, describeResult, describeTool, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const { MCPToolCache } = await ctx.mod('mcp/index.ts')
  const { AgentStorage } = await ctx.mod('session/agent-storage.ts')
  const storage = await AgentStorage.open(`${ctx.tmp}/agent.db`)
  const config = ctx.stdio(['--init-delay-ms=1200'])
  const first = new MCPManager(ctx.project, new MCPToolCache(storage))
  await ctx.within('first', 15_000, first.connectServers({ cached: config }, {}, undefined, 0))
  const cache = new MCPToolCache(storage)
  await ctx.waitFor('cached', async () => (await cache.get('cached', config)) !== null, 5000)
  const cachedTools = (await cache.get('cached', config))?.map((t: Agent) => t.name)
  await ctx.within('first down', 5000, first.disconnectAll())
  const second = new MCPManager(ctx.project, new MCPToolCache(storage))
  ctx.defer(() => second.disconnectAll())
  const result = await ctx.within('second', 15_000, second.connectServers({ cached: config }, {}, undefined, 200))
  const standIns = result.tools.map(describeTool)
  const echo = second.getTools().find((t: Agent) => t.mcpToolName === 'echo')
  const executed = await settle(
    ctx
      .within(
        'deferred execute',
        10_000,
        echo.execute('call-1', { message: 'deferred' }, undefined, { sessionManager: { getCwd: () => ctx.project } }),
      )
      .then(describeResult),
  )
  const startup = await ctx.within('waitForStartup', 10_000, second.waitForStartup(8000))
  return {
    cachedTools,
    standIns,
    connectedServers: result.connectedServers,
    executed,
    startup,
    after: second.getTools().map(describeTool),
  }
}
