// listTools over pages (the last page's nextCursor is ""), cached on the connection; a server
// without the tools capability has none and is not asked.
import { type Ctx, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const paged = await ctx.within('connect', 10_000, client.connectToServer('paged', ctx.stdio(['--pages=3'])))
  ctx.defer(() => client.disconnectServer(paged))
  const first = await ctx.within('listTools', 5000, client.listTools(paged))
  const again = await ctx.within('listTools again', 5000, client.listTools(paged))
  const none = await ctx.within('connect', 10_000, client.connectToServer('none', ctx.stdio(['--no-tools-cap'])))
  ctx.defer(() => client.disconnectServer(none))
  const noTools = await ctx.within('listTools none', 5000, client.listTools(none))
  return {
    tools: first,
    cachedSameArray: again === first,
    connectionTools: paged.tools?.map((t: { name: string }) => t.name),
    supportsTools: [client.serverSupportsTools(paged.capabilities), client.serverSupportsTools(none.capabilities)],
    noTools,
    frames: await stdioFrames(paged.transport),
    framesNone: await stdioFrames(none.transport),
  }
}
