// Notifications (11.4): setNotificationsEnabled subscribes to the known resources and
// unsubscribes when turned off; getNotificationState; resources/updated reaches
// setOnResourcesChanged only for a subscribed URI; list_changed refreshes (resources → catalog
// event, prompts → setOnPromptsChanged); other notifications reach the listeners after the
// manager's own handling; a listener added late gets the buffered ones; a throwing listener never
// breaks another; unsubscribe functions work.
import { type Agent, type Ctx, stdioFrames, toJson } from '../harness.ts'

export default async function (ctx: Ctx) {
  const mgr = await ctx.mod('mcp/index.ts')
  const manager = new mgr.MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  const seen: unknown[] = []
  await ctx.within('connectServers', 15_000, manager.connectServers({ sub: ctx.stdio(['--subscribe']) }, {}, undefined, 0))
  const conn = () => manager.getConnection('sub')
  await ctx.waitFor('resources loaded', () => conn()?.resources !== undefined, 5000)
  const emit = (method: string, params?: unknown) => ctx.within(method, 5000, conn().transport.request('emit', { method, params }))
  await emit('fixture/early', { n: 1 })
  await ctx.within('notify', 5000, conn().transport.request('notify', { count: 2 }))
  const late: unknown[] = []
  // The first listener gets the notifications buffered before it (drop-oldest, 100).
  const stop = manager.addNotificationListener((server: string, method: string, params: unknown) => late.push({ server, method, params }))
  manager.addNotificationListener(() => {
    throw new Error('a listener that throws')
  })
  manager.addNotificationListener((server: string, method: string) => seen.push({ server, method }))
  manager.setOnResourcesChanged((server: string, uri: string) => seen.push({ resourcesChanged: [server, uri] }))
  manager.setOnPromptsChanged((server: string) => seen.push({ promptsChanged: server }))
  manager.addCatalogChangeListener((e: unknown) => seen.push({ catalog: e }))
  // Snapshots: the state's map is live.
  const stateBefore = toJson(manager.getNotificationState())
  manager.setNotificationsEnabled(true)
  await ctx.waitFor('subscribed', () => manager.getNotificationState().subscriptions.get('sub')?.size, 5000).catch(() => false)
  const stateOn = toJson(manager.getNotificationState())
  // One notification at a time, each awaited through its effect: the order across notifications
  // is not what is compared (a refresh is awaited before its fan-out, so a later frame may overtake).
  const has = (pred: (e: Agent) => boolean) => () => seen.some(pred)
  await emit('notifications/resources/updated', { uri: 'fixture://a' })
  await ctx
    .waitFor(
      'updated a',
      has((e) => e.method === 'notifications/resources/updated'),
      5000,
    )
    .catch(() => false)
  await emit('notifications/resources/updated', { uri: 'fixture://not-subscribed' })
  await ctx
    .waitFor('updated other', () => seen.filter((e: Agent) => e.method === 'notifications/resources/updated').length > 1, 5000)
    .catch(() => false)
  await emit('notifications/resources/list_changed')
  await ctx
    .waitFor(
      'resources list_changed',
      has((e) => e.method === 'notifications/resources/list_changed'),
      5000,
    )
    .catch(() => false)
  await emit('notifications/prompts/list_changed')
  await ctx
    .waitFor(
      'prompts list_changed',
      has((e) => e.method === 'notifications/prompts/list_changed'),
      5000,
    )
    .catch(() => false)
  await emit('fixture/custom', { x: 1 })
  await ctx
    .waitFor(
      'custom seen',
      has((e) => e.method === 'fixture/custom'),
      5000,
    )
    .catch(() => false)
  stop()
  manager.setNotificationsEnabled(false)
  await emit('fixture/after-stop')
  await ctx.waitFor('after-stop seen', () => seen.some((e: Agent) => e.method === 'fixture/after-stop'), 5000).catch(() => false)
  await ctx
    .waitFor(
      'unsubscribed',
      async () => {
        const { requests } = await conn().transport.request('requests', {})
        return requests.some((r: Agent) => r.method === 'resources/unsubscribe')
      },
      5000,
    )
    .catch(() => false)
  return {
    stateBefore,
    stateOn,
    stateOff: toJson(manager.getNotificationState()),
    late,
    seen,
    postAction: [
      mgr.resolveSubscriptionPostAction(false, 1, 1),
      mgr.resolveSubscriptionPostAction(true, 2, 1),
      mgr.resolveSubscriptionPostAction(true, 1, 1),
    ],
    frames: await stdioFrames(conn().transport),
  }
}
