// 17.0.9: a tool result whose _meta["mcp/www_authenticate"] carries a challenge goes to the auth
// handler, the server is reconnected with the config it returns, and the call is made once more
// (the second result is returned even if it challenges again); without a handler the first
// result stands.
import { type Agent, type Ctx, describeResult, settle, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const events: unknown[] = []
  manager.addConnectionStatusListener((e: unknown) => events.push(e))
  await ctx.within('connectServers', 15_000, manager.connectServers({ rx: ctx.stdio() }, {}, undefined, 0))
  await ctx.within('set-tools', 5000, manager.getConnection('rx').transport.request('set-tools', { names: ['reflect'] }))
  await ctx.waitFor('reflect', () => manager.getTools().some((t: Agent) => t.mcpToolName === 'reflect'))
  // As connectServers makes the tools of a server's first tools/list: with a reconnect that passes
  // the challenge on (a tools/list_changed refresh makes them without; see `refreshed` below).
  const { MCPTool } = await ctx.mod('mcp/index.ts')
  const def = { name: 'reflect', inputSchema: { type: 'object' } }
  const tool = () => MCPTool.fromTools(manager.getConnection('rx'), [def], (o?: unknown) => manager.reconnectServer('rx', o))[0]
  const challenged = {
    content: [{ type: 'text', text: 'authorization required' }],
    isError: true,
    _meta: { 'mcp/www_authenticate': ['Bearer realm="parity", scope="read"', '', 42] },
  }
  const toolCtx = { sessionManager: { getCwd: () => ctx.project } }
  const noHandler = await settle(
    ctx.within('no handler', 10_000, tool().execute('c1', { result: challenged }, undefined, toolCtx)).then(describeResult),
  )
  const handled: unknown[] = []
  manager.setAuthHandler(async (server: string, challenge: unknown) => {
    handled.push({ server, challenge })
    return { ...manager.getServerConfig(server), env: { PARITY_AUTH: 'granted' } }
  })
  const first = manager.getConnection('rx')
  const withHandler = await settle(
    ctx.within('handler', 10_000, tool().execute('c2', { result: challenged }, undefined, toolCtx)).then(describeResult),
  )
  const reconnected = manager.getConnection('rx') !== first
  const handledBefore = handled.length
  await ctx.within('set-tools again', 5000, manager.getConnection('rx').transport.request('set-tools', { names: ['reflect'] }))
  await ctx.waitFor('listed again', () => manager.getTools().some((t: Agent) => t.mcpToolName === 'reflect'))
  const listed = manager.getTools().find((t: Agent) => t.mcpToolName === 'reflect')
  const refreshed = await settle(
    ctx.within('refreshed', 10_000, listed.execute('c3', { result: challenged }, undefined, toolCtx)).then(describeResult),
  )
  const handledByRefreshed = handled.length - handledBefore
  return {
    noHandler,
    withHandler,
    handled,
    reconnected,
    refreshed,
    handledByRefreshed,
    config: manager.getServerConfig('rx')?.env,
    framesNew: await stdioFrames(manager.getConnection('rx').transport),
    events,
  }
}
