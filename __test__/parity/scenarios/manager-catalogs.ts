// The manager's catalogs after tools (best effort): resources and templates (-32601 → [] keeps
// the resources: 16.0.6, 17.1.6), prompts; catalog-change events; getServerResources,
// readServerResource, getServerPrompts, executePrompt (no empty arguments), ensureServerResources,
// setOnPromptsChanged firing at once for servers with prompts; unknown servers.
import { type Agent, type Ctx, settle, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const catalog: unknown[] = []
  manager.addCatalogChangeListener((e: unknown) => catalog.push(e))
  await ctx.within(
    'connectServers',
    15_000,
    manager.connectServers({ fx: ctx.stdio(), bare: ctx.stdio(['--no-tools-cap']) }, {}, undefined, 0),
  )
  await ctx.waitFor('catalogs', () => catalog.length >= 3, 5000).catch(() => false)
  await ctx.within('ensure', 5000, manager.ensureServerResources('fx'))
  const promptsChanged: string[] = []
  manager.setOnPromptsChanged((name: string) => promptsChanged.push(name))
  return {
    catalog: [...catalog].sort((a: Agent, b: Agent) => `${a.serverName}${a.kind}`.localeCompare(`${b.serverName}${b.kind}`)),
    resources: { fx: manager.getServerResources('fx'), bare: manager.getServerResources('bare'), none: manager.getServerResources('none') },
    prompts: { fx: manager.getServerPrompts('fx'), bare: manager.getServerPrompts('bare'), none: manager.getServerPrompts('none') },
    read: await settle(ctx.within('read', 5000, manager.readServerResource('fx', 'fixture://a'))),
    readNone: await settle(ctx.within('read none', 5000, manager.readServerResource('none', 'fixture://a'))),
    prompt: await settle(ctx.within('prompt', 5000, manager.executePrompt('fx', 'greet', {}))),
    promptArgs: await settle(ctx.within('prompt args', 5000, manager.executePrompt('fx', 'greet', { who: 'Bo' }))),
    promptNone: await settle(ctx.within('prompt none', 5000, manager.executePrompt('none', 'greet'))),
    promptsChanged: promptsChanged.sort(),
    frames: await stdioFrames(manager.getConnection('fx').transport),
  }
}
