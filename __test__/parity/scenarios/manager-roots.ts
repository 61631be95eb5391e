// The manager answers a server's roots/list with its own cwd (not the process's), ping with {},
// anything else with -32601.
import type { Ctx } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(`${ctx.tmp}/elsewhere/work dir`)
  ctx.defer(() => manager.disconnectAll())
  await ctx.within('connectServers', 15_000, manager.connectServers({ fx: ctx.stdio() }, {}, undefined, 0))
  const reverse = async (method: string) =>
    (await ctx.within(method, 5000, manager.getConnection('fx').transport.request('reverse', { method, params: {} }))).answer
  return { roots: await reverse('roots/list'), ping: await reverse('ping'), other: await reverse('elicitation/create') }
}
