// Failures of a tool call as the agent shows them (formatMCPToolFailure text, isError, details):
// a request that outlives the server's timeout, and a call after the server exited, on MCPTool
// objects made with MCPTool.fromTools (no reconnect).
import { type Agent, type Ctx, describeResult, describeTool, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const bridge = await ctx.mod('mcp/tool-bridge.ts')
  const conn = await ctx.within('connect', 10_000, client.connectToServer('fx', ctx.stdio([], { timeout: 300 })))
  ctx.defer(() => client.disconnectServer(conn))
  const defs = await ctx.within('tools', 5000, client.listTools(conn))
  const tools = bridge.MCPTool.fromTools(conn, defs)
  const byName = (n: string) => tools.find((t: Agent) => t.mcpToolName === n)
  const toolCtx = { sessionManager: { getCwd: () => ctx.project } }
  const run = (n: string, params: unknown) =>
    settle(ctx.within(n, 10_000, byName(n).execute('call-1', params, undefined, toolCtx, undefined)).then(describeResult))
  const slow = await run('slow', { ms: 3000 })
  await settle(ctx.within('crash', 5000, conn.transport.request('crash', { code: 3 })))
  const afterExit = await run('echo', { message: 'anyone?' })
  const aborted = await settle(
    ctx.within('aborted', 5000, byName('echo').execute('call-2', { message: 'x' }, undefined, toolCtx, AbortSignal.abort())),
  )
  // With a reconnect: a retriable failure (the server is gone) reconnects and retries once.
  const reconnects: number[] = []
  const withReconnect = bridge.MCPTool.fromTools(conn, defs, async () => {
    reconnects.push(reconnects.length + 1)
    const fresh = await client.connectToServer('fx', ctx.stdio())
    ctx.defer(() => client.disconnectServer(fresh))
    return fresh
  })
  const retried = await settle(
    ctx
      .within(
        'retried',
        10_000,
        withReconnect.find((t: Agent) => t.mcpToolName === 'echo').execute('call-3', { message: 'again' }, undefined, toolCtx),
      )
      .then(describeResult),
  )
  const noRetry = bridge.MCPTool.fromTools(conn, defs, async () => null)
  const reconnectFailed = await settle(
    ctx
      .within(
        'reconnect failed',
        10_000,
        noRetry.find((t: Agent) => t.mcpToolName === 'echo').execute('call-4', { message: 'x' }, undefined, toolCtx),
      )
      .then(describeResult),
  )
  return { tools: tools.map(describeTool), slow, afterExit, aborted, retried, reconnects, reconnectFailed }
}
