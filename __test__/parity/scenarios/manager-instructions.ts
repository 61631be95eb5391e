// getServerInstructions: the servers' initialize instructions, except where the config says
// `instructions: false`.
import type { Ctx } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  await ctx.within(
    'connectServers',
    15_000,
    manager.connectServers(
      {
        guided: ctx.stdio(['--instructions=Call echo first.']),
        muted: ctx.stdio(['--instructions=Hidden text.'], { instructions: false }),
        silent: ctx.stdio(),
      },
      {},
      undefined,
      0,
    ),
  )
  return {
    instructions: manager.getServerInstructions(),
    connectionInstructions: Object.fromEntries(['guided', 'muted', 'silent'].map((n) => [n, manager.getConnection(n)?.instructions])),
  }
}
