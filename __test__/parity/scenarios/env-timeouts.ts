// OMP_MCP_TIMEOUT_MS=0 (no deadline, 11.3) and OMP_MCP_STARTUP_TIMEOUT_MS, read as 18.3.4 reads
// them: the resolved values, and a handshake slower than the configured timeout that still
// completes.
import { type Ctx, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const timeout = await ctx.mod('mcp/timeout.ts')
  const client = await ctx.mod('mcp/client.ts')
  const resolved = {
    request: [undefined, 500].map((v) => timeout.resolveMCPTimeoutMs(v)),
    startup: [undefined, 500].map((v) => timeout.resolveMCPStartupTimeoutMs(v)),
  }
  const conn = await settle(
    ctx.within('connect', 10_000, client.connectToServer('slow', ctx.stdio(['--init-delay-ms=700'], { timeout: 200 }))),
  )
  if ('value' in conn) ctx.defer(() => client.disconnectServer(conn.value))
  return {
    env: { OMP_MCP_TIMEOUT_MS: process.env.OMP_MCP_TIMEOUT_MS, OMP_MCP_STARTUP_TIMEOUT_MS: process.env.OMP_MCP_STARTUP_TIMEOUT_MS },
    resolved,
    connected: 'value' in conn ? true : conn,
  }
}
