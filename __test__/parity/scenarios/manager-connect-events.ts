// connectServers with a status callback and a status listener: the events in order (connecting,
// then connected / failed per server, validation failures at once), the result (tools, errors,
// connected servers), waitForStartup, and the manager's view of each server afterwards.
import { type Agent, type Ctx, describeTool, groupEvents } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const onStatus: unknown[] = []
  const listener: unknown[] = []
  const unsubscribe = manager.addConnectionStatusListener((e: unknown) => listener.push(e))
  manager.addConnectionStatusListener(() => {
    throw new Error('a listener that throws')
  })
  const configs = {
    ok: ctx.stdio(),
    refused: ctx.stdio(['--init-error']),
    missing: { command: `${ctx.tmp}/no-such-command` },
    invalid: { type: 'stdio' },
  }
  const sources = { ok: { provider: 'parity', providerName: 'Parity', path: `${ctx.project}/.mcp.json`, level: 'project' } }
  const result = await ctx.within(
    'connectServers',
    15_000,
    manager.connectServers(configs, sources, (e: unknown) => onStatus.push(e), 0),
  )
  const startup = await ctx.within('waitForStartup', 10_000, manager.waitForStartup(5000))
  unsubscribe()
  const status = Object.fromEntries(Object.keys(configs).map((n) => [n, manager.getConnectionStatus(n)]))
  return {
    result: {
      tools: result.tools.map((t: Agent) => t.name),
      errors: result.errors,
      connectedServers: result.connectedServers,
      exaApiKeys: result.exaApiKeys,
    },
    // The servers connect concurrently: the order within a server is compared, not across them.
    onStatus: groupEvents(onStatus),
    listener: groupEvents(listener),
    startup,
    status,
    connected: manager.getConnectedServers(),
    all: manager.getAllServerNames().sort(),
    source: manager.getSource('ok'),
    config: { ok: manager.getServerConfig('ok'), refused: manager.getServerConfig('refused'), invalid: manager.getServerConfig('invalid') },
    tools: manager.getTools().map(describeTool),
  }
}
