// 18.2.1: `read mcp://…` (the agent's McpProtocolHandler over MCPManager.instance()) waits for a
// server still connecting after the startup window, then reads the resource; an unknown resource
// lists the available ones.
import { type Ctx, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const { McpProtocolHandler } = await ctx.mod('internal-urls/mcp-protocol.ts')
  const { parseInternalUrl } = await ctx.mod('internal-urls/parse.ts')
  const manager = new MCPManager(ctx.project)
  MCPManager.setInstance(manager)
  ctx.defer(() => MCPManager.setInstance(undefined))
  ctx.defer(() => manager.disconnectAll())
  await ctx.within('connectServers', 15_000, manager.connectServers({ late: ctx.stdio(['--init-delay-ms=800']) }, {}, undefined, 50))
  const connectedAtReturn = manager.getConnectedServers()
  const handler = new McpProtocolHandler()
  const read = (u: string) => settle(ctx.within(u, 10_000, handler.resolve(parseInternalUrl(u))))
  return {
    connectedAtReturn,
    native: await read('fixture://a'),
    wrapped: await read('mcp://fixture://a'),
    missing: await read('mcp://fixture://zzz'),
  }
}
