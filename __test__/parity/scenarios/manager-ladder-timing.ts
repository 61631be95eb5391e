// SPEC 11.4 reconnect policy, the default ladder's timing: a stdio server that was connected
// exits, and every later start of it fails at once; the manager tries again at once, then after
// 500, 1000, 2000 and 4000 ms, then reports it failed (stdio servers stop at the ladder). When each
// start happened is read from the fixture's own log (--spawn-log); each gap is recorded as the
// largest ladder step it reaches (a start takes tens of milliseconds, so a gap is its step plus
// that: the step is what is compared, never the milliseconds).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { type Agent, type Ctx, settle } from '../harness.ts'

const STEPS = [0, 500, 1000, 2000, 4000, 8000]
/** The largest step a gap reaches (20 ms of timer slack allowed). */
const step = (gap: number) => STEPS.filter((s) => s <= gap + 20).at(-1) ?? 0

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const log = `${ctx.tmp}/ladder-spawns.log`
  const refuse = `${ctx.tmp}/ladder-refuse`
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const events: unknown[] = []
  manager.addConnectionStatusListener((e: unknown) => events.push(e))
  await ctx.within(
    'connectServers',
    15_000,
    manager.connectServers({ ladder: ctx.stdio([`--spawn-log=${log}`, `--fail-if-exists=${refuse}`]) }, {}, undefined, 0),
  )
  events.push('--- the server exits; later starts fail ---')
  writeFileSync(refuse, '')
  const crashedAt = Date.now()
  await settle(ctx.within('crash', 5000, manager.getConnection('ladder').transport.request('crash', { code: 1 })))
  await ctx.waitFor('failed', () => events.some((e: Agent) => e?.type === 'failed'), 20_000)
  const starts = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map(Number) : []
  const attempts = starts.slice(1)
  const gaps = attempts.map((t, i) => step(t - (i === 0 ? crashedAt : attempts[i - 1])))
  return {
    attempts: attempts.length,
    gaps,
    status: manager.getConnectionStatus('ladder'),
    connection: manager.getConnection('ladder') === undefined ? 'none' : 'kept',
    tools: manager.getTools().length,
    events,
  }
}
