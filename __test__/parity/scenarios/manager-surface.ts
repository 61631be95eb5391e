// The manager's smaller surface: instance()/setInstance(), getServerConfig, prepareConfig
// (config values resolved: env names, `!commands`, literal policies; {oauth: false}),
// sortMCPToolsByName, reconcileProjectConfig / reconcileBrowserFilter before any discovery,
// disconnectServer of an unknown server, getConnectionStatus of one.
import { type Ctx, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const mgr = await ctx.mod('mcp/index.ts')
  const manager = new mgr.MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const before = mgr.MCPManager.instance()
  mgr.MCPManager.setInstance(manager)
  const same = mgr.MCPManager.instance() === manager
  mgr.MCPManager.setInstance(undefined)
  process.env.PARITY_VALUE = 'from-env'
  const stdio = {
    command: 'node',
    env: { A: 'PARITY_VALUE', B: 'literal value', C: '!echo from-command', D: '', E: 'PARITY_MISSING_VAR' },
  }
  const literal = { ...stdio, envPolicy: 'literal' }
  const keys = { ...stdio, envLiteralKeys: ['A', 'D'] }
  const http = { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { 'X-A': 'PARITY_VALUE', 'X-B': '!echo h', 'X-C': '' } }
  const locked = { ...http, headerPolicy: 'origin-locked' }
  const sorted = mgr.sortMCPToolsByName([{ name: 'mcp__b' }, { name: 'mcp__a_2' }, { name: 'mcp__A' }, { name: 'mcp__a_10' }])
  return {
    before: before === undefined,
    same,
    after: mgr.MCPManager.instance() === undefined,
    prepared: {
      stdio: await settle(ctx.within('stdio', 5000, manager.prepareConfig(stdio))),
      literal: await settle(ctx.within('literal', 5000, manager.prepareConfig(literal))),
      keys: await settle(ctx.within('keys', 5000, manager.prepareConfig(keys))),
      http: await settle(ctx.within('http', 5000, manager.prepareConfig(http, { oauth: false }))),
      locked: await settle(ctx.within('locked', 5000, manager.prepareConfig(locked))),
    },
    sorted,
    unknown: {
      config: manager.getServerConfig('nope'),
      status: manager.getConnectionStatus('nope'),
      source: manager.getSource('nope'),
      disconnect: await settle(ctx.within('disconnect', 5000, manager.disconnectServer('nope'))),
      reconnect: await settle(ctx.within('reconnect', 5000, manager.reconnectServer('nope'))),
      waitForConnection: await settle(ctx.within('wait', 5000, manager.waitForConnection('nope'))),
    },
    reconcileProject: await settle(ctx.within('reconcileProjectConfig', 5000, manager.reconcileProjectConfig(false))),
    tools: manager.getTools(),
  }
}
