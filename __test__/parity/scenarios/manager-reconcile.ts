// SPEC 11.4 manager surface: reconcileProjectConfig and reconcileBrowserFilter after a discovery,
// with the manager's config loader argument (the agent hands its own discovery in): project-level
// servers go when the project config is turned off (a user-level server they shadowed comes
// back), and come back when it is on; the same setting twice loads nothing; browser servers (the
// agent's isBrowserMCPServer) come and go with the filter; calls made at once are serialized.
import { type Agent, type Ctx, groupEvents } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const user: Record<string, Agent> = {
    shared: ctx.stdio(['--instructions=user']),
    solo: ctx.stdio(),
    playwright: ctx.stdio(),
  }
  const project: Record<string, Agent> = { shared: ctx.stdio(['--instructions=project']), proj: ctx.stdio() }
  const source = (level: string) => ({ provider: 'parity', providerName: 'Parity', path: `${ctx.tmp}/${level}.json`, level })
  const loads: unknown[] = []
  const load = async (_cwd: string, o: Agent) => {
    loads.push({ enableProjectConfig: o?.enableProjectConfig ?? null, filterBrowser: o?.filterBrowser ?? null })
    const configs: Record<string, Agent> = {}
    const sources: Record<string, Agent> = {}
    for (const [name, config] of Object.entries(user)) {
      if (o?.filterBrowser && name === 'playwright') continue
      configs[name] = config
      sources[name] = source('user')
    }
    if (o?.enableProjectConfig ?? true)
      for (const [name, config] of Object.entries(project)) {
        configs[name] = config
        sources[name] = source('project')
      }
    return { configs, sources, exaApiKeys: [] }
  }
  const manager = new MCPManager(ctx.project, null, load)
  ctx.defer(() => manager.disconnectAll())
  const events: unknown[] = []
  manager.addConnectionStatusListener((e: unknown) => events.push(e))
  const states: Record<string, unknown> = {}
  const state = async (label: string) => {
    await ctx.within(`${label}: pending`, 15_000, manager.waitForPendingConnections())
    states[label] = {
      connected: [...manager.getConnectedServers()].sort(),
      shared: {
        instructions: manager.getServerConfig('shared')?.args?.find((a: string) => a.startsWith('--instructions')) ?? null,
        level: manager.getSource('shared')?.level ?? null,
      },
      tools: manager
        .getTools()
        .map((t: Agent) => t.name)
        .sort(),
      loads: loads.length,
      events: groupEvents(events.splice(0)),
    }
  }
  await ctx.within(
    'discoverAndConnect',
    15_000,
    manager.discoverAndConnect({ enableProjectConfig: true, filterBrowser: true, startupTimeoutMs: 0 }),
  )
  await state('discovered')
  await ctx.within('project off', 15_000, manager.reconcileProjectConfig(false))
  await state('projectOff')
  await ctx.within('project off again', 15_000, manager.reconcileProjectConfig(false))
  await state('projectOffAgain')
  await ctx.within('project on', 15_000, manager.reconcileProjectConfig(true))
  await state('projectOn')
  await ctx.within('browser allowed', 15_000, manager.reconcileBrowserFilter(false))
  await state('browserAllowed')
  await ctx.within(
    'browser toggled at once',
    15_000,
    Promise.all([manager.reconcileBrowserFilter(true), manager.reconcileBrowserFilter(false), manager.reconcileBrowserFilter(true)]),
  )
  await state('browserFilteredAgain')
  return { states, loads }
}
