// Errors of requests: a JSON-RPC error (code, message, data), an unknown method (-32601), and the
// pending request of a server that exits.
import { type Ctx, describeError } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const conn = await ctx.within('connect', 10_000, client.connectToServer('fx', ctx.stdio()))
  ctx.defer(() => client.disconnectServer(conn))
  const fail = async (label: string, p: Promise<unknown>) => {
    try {
      return { value: await ctx.within(label, 5000, p) }
    } catch (error) {
      return { error: describeError(error, ['data', 'rpcCode', 'failure', 'stage', 'transport', 'retryable']) }
    }
  }
  const rpc = await fail('error', conn.transport.request('error', { code: -32042, message: 'custom failure', data: { hint: 'x' } }))
  const unknown = await fail('unknown', conn.transport.request('no/such/method', {}))
  const crash = await fail('crash', conn.transport.request('crash', { code: 3, stderr: 'dying\n' }))
  const afterCrash = await fail('after crash', client.callTool(conn, 'echo', { message: 'late' }))
  return { rpc, unknown, crash, afterCrash }
}
