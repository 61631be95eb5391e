// getTools() names (18.2.1): `mcp__<server>_<tool>` keeping digits, the server prefix stripped,
// the 64-character cap with its hash suffix, legacyName, sorted by name; a tools/list_changed
// refresh (the fixture's `set-tools`) replaces a server's tools and awaits setOnToolsChanged.
import { type Agent, type Ctx, describeTool } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const changes: string[][] = []
  manager.setOnToolsChanged(async (tools: Array<{ name: string }>) => {
    changes.push(tools.map((t) => t.name))
  })
  const notes: unknown[] = []
  manager.addNotificationListener((server: string, method: string) => notes.push({ server, method, tools: manager.getTools().length }))
  await ctx.within('connectServers', 15_000, manager.connectServers({ 'Srv-9': ctx.stdio(), 'my.server': ctx.stdio() }, {}, undefined, 0))
  const initial = manager.getTools().map(describeTool)
  const names = ['srv_9_lookup', 'Tool2Go', 'weird name!', `very_${'long_'.repeat(14)}tool`, '123', 'srv-9-direct']
  const conn = manager.getConnection('Srv-9')
  await ctx.within('set-tools', 5000, conn.transport.request('set-tools', { names }))
  await ctx.waitFor('refresh', () => manager.getTools().some((t: Agent) => t.mcpToolName === 'Tool2Go'), 5000)
  await ctx.waitFor('notification', () => notes.length > 0, 3000).catch(() => false)
  return {
    initial,
    afterRefresh: manager.getTools().map(describeTool),
    // One call per server at startup (in the servers' order of arrival), one after the refresh.
    changes: { calls: changes.length, last: changes.at(-1) },
    notes,
  }
}
