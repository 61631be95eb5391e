// The tool objects' execute (11.4 tool bridge, 11.5): text, image blocks kept (17.3.8), resource
// blocks as text, isError as "Error: …", structuredContent appended as fenced JSON and in
// details.structuredContent unless a text block already carries it (18.1.3, 18.3.3), _meta in
// details.mcpMeta; arguments prepared (non-object → {}, the intent field `i` stripped unless
// declared (16.2.0), empty optional placeholders omitted (16.1.17)); the frames the server got.
import { type Agent, type Ctx, describeResult, settle, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  await ctx.within('connectServers', 15_000, manager.connectServers({ fx: ctx.stdio(), rx: ctx.stdio() }, {}, undefined, 0))
  await ctx.within('set-tools', 5000, manager.getConnection('rx').transport.request('set-tools', { names: ['reflect'] }))
  await ctx.waitFor('reflect listed', () => manager.getTools().some((t: Agent) => t.mcpServerName === 'rx' && t.mcpToolName === 'reflect'))
  const tool = (server: string, name: string) => manager.getTools().find((t: Agent) => t.mcpServerName === server && t.mcpToolName === name)
  const toolCtx = { sessionManager: { getCwd: () => ctx.project } }
  const run = async (server: string, name: string, params: unknown) =>
    settle(
      ctx
        .within(`${server}/${name}`, 10_000, tool(server, name).execute('call-1', params, undefined, toolCtx, undefined))
        .then(describeResult),
    )
  const reflect = (result: unknown) => run('rx', 'reflect', { result })
  const structured = { answer: 42, nested: { ok: true } }
  const out = {
    echo: await run('fx', 'echo', { message: 'hello', i: 'why I call this' }),
    add: await run('fx', 'add', { a: 2, b: '' }),
    addEmptyObject: await run('fx', 'add', { a: 1, b: {} }),
    mixed: await run('fx', 'mixed', {}),
    fail: await run('fx', 'fail', {}),
    nonObject: await run('fx', 'mixed', 'not an object'),
    arrayParams: await run('fx', 'mixed', [1, 2]),
    structured: await reflect({ content: [{ type: 'text', text: 'summary' }], structuredContent: structured, _meta: { trace: 'abc' } }),
    structuredInText: await reflect({ content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured }),
    imageOnlyError: await reflect({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }], isError: true }),
    empty: await reflect({ content: [] }),
    framesFx: await stdioFrames(manager.getConnection('fx').transport),
  }
  return out
}
