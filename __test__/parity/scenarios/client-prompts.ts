// Prompts through the function API: listPrompts (cached), getPrompt without empty arguments.
import { type Ctx, settle, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const conn = await ctx.within('connect', 10_000, client.connectToServer('fx', ctx.stdio()))
  ctx.defer(() => client.disconnectServer(conn))
  const prompts = await settle(ctx.within('prompts', 5000, client.listPrompts(conn)))
  const again = await settle(ctx.within('prompts again', 5000, client.listPrompts(conn)))
  return {
    prompts,
    again,
    cached: conn.prompts,
    noArgs: await settle(ctx.within('get', 5000, client.getPrompt(conn, 'greet'))),
    emptyArgs: await settle(ctx.within('get {}', 5000, client.getPrompt(conn, 'greet', {}))),
    withArgs: await settle(ctx.within('get who', 5000, client.getPrompt(conn, 'greet', { who: 'Ann' }))),
    frames: await stdioFrames(conn.transport),
  }
}
