// The manager module imported alone, as the agent's loader.ts, read-cli.ts and
// internal-urls/mcp-protocol.ts import it (`./manager`, not `./index`): its tool objects are
// complete (render hooks, the agent's schema normalisation), because the agent's manager.ts
// imports tool-bridge.ts itself.
import { type Ctx, describeTool } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/manager.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  await ctx.within('connectServers', 15_000, manager.connectServers({ fx: ctx.stdio() }, {}, undefined, 0))
  return { tools: manager.getTools().map(describeTool) }
}
