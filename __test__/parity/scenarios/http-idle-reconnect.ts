// 18.2.1 (an idle remote server that drops comes back on its schedule), with the 18.3.4 reconnect
// policy argument: an HTTP server holding the GET stream open goes away; the ladder fails; the
// manager keeps trying on the schedule (retryBaseMs) and reconnects once the server is back on the
// same port; the events in order. The fixture is restarted by the scenario.
import { type ChildProcess, spawn } from 'node:child_process'
import { type Agent, type Ctx, HTTP_FIXTURE, NODE, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const start = async (port = 0): Promise<{ child: ChildProcess; port: number }> => {
    const child = spawn(NODE, [HTTP_FIXTURE, ctx.marker, `--port=${port}`], { stdio: ['pipe', 'pipe', 'ignore'] })
    ctx.defer(() => child.kill('SIGKILL'))
    const got = await ctx.within(
      'fixture',
      10_000,
      new Promise<number>((resolve) => child.stdout?.once('data', (d) => resolve(JSON.parse(String(d)).port))),
    )
    return { child, port: got }
  }
  const first = await start()
  const policy = { ladderMs: [100, 100], retryBaseMs: 400, retryMaxMs: 800 }
  const manager = new MCPManager(ctx.project, null, undefined, policy)
  ctx.defer(() => manager.disconnectAll())
  const events: unknown[] = []
  manager.addConnectionStatusListener((e: unknown) => events.push(e))
  const url = `http://127.0.0.1:${first.port}/mcp`
  await ctx.within('connectServers', 15_000, manager.connectServers({ remote: { type: 'http', url } }, {}, undefined, 0))
  await settle(ctx.within('listener-mode', 5000, manager.getConnection('remote').transport.request('listener-mode', { mode: 'stream' })))
  await ctx.within('reconnect with stream', 10_000, manager.reconnectServer('remote', { manual: true }))
  const stats = async () => {
    const s = await (await fetch(`http://127.0.0.1:${first.port}/stats`)).json()
    return { gets: s.gets.length, openStreams: s.openStreams }
  }
  const streamBefore = await settle(ctx.within('stats', 5000, stats()))
  events.push('--- server goes away ---')
  first.child.kill('SIGKILL')
  await ctx.waitFor('failed', () => events.some((e: Agent) => e?.type === 'failed'), 10_000).catch(() => false)
  const whileDown = manager.getConnectionStatus('remote')
  events.push('--- server back ---')
  await start(first.port)
  await ctx
    .waitFor('back', () => manager.getConnectionStatus('remote') === 'connected' && events.at(-1) !== '--- server back ---', 10_000)
    .catch(() => false)
  return {
    streamBefore,
    whileDown,
    status: manager.getConnectionStatus('remote'),
    tools: manager.getTools().map((t: Agent) => t.name),
    events,
  }
}
