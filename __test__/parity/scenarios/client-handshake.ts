// connectToServer over stdio: the connection object, the handshake frames (protocol version
// 2025-11-25, capabilities, clientInfo, notifications/initialized) and the default answers to the
// server's requests (`roots/list` with the project directory, `ping`, anything else -32601).
import { type Ctx, stdioFrames } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const conn = await ctx.within('connect', 10_000, client.connectToServer('fx', ctx.stdio(['--instructions=Use the fixture.'])))
  ctx.defer(() => client.disconnectServer(conn))
  const connection = {
    name: conn.name,
    config: conn.config,
    serverInfo: conn.serverInfo,
    capabilities: conn.capabilities,
    instructions: conn.instructions,
    tools: conn.tools,
  }
  const reverse = async (method: string, params = {}) =>
    (await ctx.within(method, 5000, conn.transport.request('reverse', { method, params }))).answer
  const roots = await reverse('roots/list')
  const ping = await reverse('ping')
  const unknown = await reverse('sampling/createMessage', { messages: [] })
  const frames = await stdioFrames(conn.transport)
  return { connection, roots, ping, unknown, frames }
}
