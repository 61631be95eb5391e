// discoverAndLoadMCPTools (the agent's loader, sdk.ts): a project `.mcp.json` (the `.mcp.json`
// provider of the agent's discovery) with a working and a failing server; the loaded tools'
// paths, the errors, the connected servers, the status events.
import { mkdirSync, writeFileSync } from 'node:fs'
import { type Agent, type Ctx, describeTool, groupEvents } from '../harness.ts'

export default async function (ctx: Ctx) {
  const loader = await ctx.mod('mcp/loader.ts')
  mkdirSync(ctx.project, { recursive: true })
  const servers = { local: ctx.stdio(), broken: ctx.stdio(['--init-error']) }
  writeFileSync(`${ctx.project}/.mcp.json`, JSON.stringify({ mcpServers: servers }, null, 2))
  const events: unknown[] = []
  const result = await ctx.within(
    'discoverAndLoadMCPTools',
    15_000,
    loader.discoverAndLoadMCPTools(ctx.project, { cacheStorage: null, startupTimeoutMs: 0, onStatus: (e: unknown) => events.push(e) }),
  )
  ctx.defer(() => result.manager.disconnectAll())
  return {
    tools: result.tools.map((t: Agent) => ({ path: t.path, resolvedPath: t.resolvedPath, tool: describeTool(t.tool) })),
    errors: result.errors,
    connectedServers: result.connectedServers,
    exaApiKeys: result.exaApiKeys,
    sources: Object.fromEntries(['local', 'broken'].map((n) => [n, result.manager.getSource(n)])),
    events: groupEvents(events),
  }
}
