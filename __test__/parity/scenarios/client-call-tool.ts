// callTool: results as the server sends them (text, image, resources, isError, structuredContent,
// _meta), arguments as given (`{}` when omitted), and the tools/call frames.
import { type Ctx, settle, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const conn = await ctx.within('connect', 10_000, client.connectToServer('fx', ctx.stdio()))
  ctx.defer(() => client.disconnectServer(conn))
  const call = (name: string, args?: Record<string, unknown>) => settle(ctx.within(name, 5000, client.callTool(conn, name, args)))
  const structured = {
    content: [{ type: 'text', text: 'see structured' }],
    structuredContent: { answer: 42, list: [1, 2] },
    _meta: { 'fixture/x': true },
  }
  return {
    echo: await call('echo', { message: 'hello' }),
    add: await call('add', { a: 2, b: 3 }),
    mixed: await call('mixed'),
    fail: await call('fail', {}),
    unknown: await call('no-such-tool', {}),
    reflect: await call('reflect', { result: structured }),
    frames: await stdioFrames(conn.transport),
  }
}
