// Resources through the function API: listResources, listResourceTemplates (-32601 → [] and
// cached), readResource, subscribe/unsubscribe (only with resources.subscribe), the capability
// checks, and the frames.
import { type Ctx, settle, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const sub = await ctx.within('connect', 10_000, client.connectToServer('sub', ctx.stdio(['--subscribe'])))
  ctx.defer(() => client.disconnectServer(sub))
  const plain = await ctx.within('connect', 10_000, client.connectToServer('plain', ctx.stdio()))
  ctx.defer(() => client.disconnectServer(plain))
  const resources = await settle(ctx.within('resources', 5000, client.listResources(sub)))
  const templates = await settle(ctx.within('templates', 5000, client.listResourceTemplates(sub)))
  const templatesAgain = await settle(ctx.within('templates again', 5000, client.listResourceTemplates(sub)))
  const read = await settle(ctx.within('read', 5000, client.readResource(sub, 'fixture://a')))
  const subscribed = await settle(ctx.within('subscribe', 5000, client.subscribeToResources(sub, ['fixture://a', 'fixture://b'])))
  const unsubscribed = await settle(ctx.within('unsubscribe', 5000, client.unsubscribeFromResources(sub, ['fixture://a'])))
  const emptySubscribe = await settle(ctx.within('subscribe none', 5000, client.subscribeToResources(sub, [])))
  const plainSubscribe = await settle(ctx.within('subscribe plain', 5000, client.subscribeToResources(plain, ['fixture://a'])))
  return {
    resources,
    templates,
    templatesAgain,
    cached: { resources: sub.resources, resourceTemplates: sub.resourceTemplates },
    read,
    subscribed,
    unsubscribed,
    emptySubscribe,
    plainSubscribe,
    supports: {
      resources: [client.serverSupportsResources(sub.capabilities), client.serverSupportsResources({})],
      subscriptions: [
        client.serverSupportsResourceSubscriptions(sub.capabilities),
        client.serverSupportsResourceSubscriptions(plain.capabilities),
      ],
      prompts: [client.serverSupportsPrompts(sub.capabilities), client.serverSupportsPrompts({})],
    },
    frames: await stdioFrames(sub.transport),
    framesPlain: await stdioFrames(plain.transport),
  }
}
