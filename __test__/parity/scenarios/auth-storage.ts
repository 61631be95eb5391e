// SPEC 11.4 auth hooks: setAuthStorage with the agent's credential storage (the agent's own
// oauth-credentials.ts reads it in both trees): an HTTP server behind a bearer check gets the
// refreshed token as a generated Authorization (a configured one replaced); when the server stops
// taking it (401), HttpTransport.onAuthError refreshes with forceRefresh and the request is made
// once more; a refresh that brings nothing new ends in the 401's error after one retry; a stdio
// server gets OAUTH_ACCESS_TOKEN; `prepareConfig(…, {oauth: false})` leaves the credential out.
import { type Agent, type Ctx, agentAuthStorage, httpFrames, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const { base } = await ctx.httpFixture()
  let valid = 'tok-1'
  const px = await ctx.proxy(base, {
    gate: (f) =>
      f.headers.authorization === `Bearer ${valid}`
        ? undefined
        : { status: 401, headers: { 'www-authenticate': 'Bearer realm="parity"', 'content-type': 'text/plain' }, body: 'unauthorized' },
  })

  // The agent's storage shape; what the refresh issues is this scenario's (harness.ts).
  const auth = agentAuthStorage({
    'mcp_oauth:remote': { type: 'oauth', access: 'stale', refresh: 'r1', expires: Date.now() - 1000 },
    'mcp_oauth:local': { type: 'oauth', access: 'local-token', refresh: 'r2', expires: Date.now() + 3_600_000 },
  })
  const { storage, refreshes } = auth

  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  manager.setAuthStorage(storage)
  const remote = {
    type: 'http',
    url: `${px.base}/mcp`,
    headers: { authorization: 'Bearer configured', 'X-Parity': 'kept' },
    auth: { type: 'oauth', credentialId: 'mcp_oauth:remote' },
  }
  const local = ctx.stdio([], { auth: { type: 'oauth', credentialId: 'mcp_oauth:local' } })
  const result = await ctx.within('connectServers', 15_000, manager.connectServers({ remote, local }, {}, undefined, 0))
  const connect = { errors: Object.fromEntries(result.errors), connected: [...result.connectedServers].sort() }
  const framesAtConnect = px.frames.length

  const transport = () => manager.getConnection('remote')?.transport
  const first = await settle(ctx.within('echo 1', 10_000, transport().request('echo', { n: 1 })))
  // The server stops taking the token: one 401, a forced refresh, the same request once more.
  valid = 'tok-2'
  const rotated = await settle(ctx.within('echo 2', 10_000, transport().request('echo', { n: 2 })))
  // The refresh brings nothing new: the retry gets 401 too, and that is the answer.
  valid = 'tok-never'
  auth.state.frozen = true
  const refused = await settle(ctx.within('echo 3', 10_000, transport().request('echo', { n: 3 })))
  const localEnv = await settle(
    ctx.within('env', 5000, manager.getConnection('local').transport.request('env', { names: ['OAUTH_ACCESS_TOKEN'] })),
  )
  const prepared = {
    withOAuth: (await manager.prepareConfig(remote)).headers,
    withoutOAuth: (await manager.prepareConfig(remote, { oauth: false })).headers,
    stdio: (await manager.prepareConfig(local)).env ?? null,
  }
  // What each request carried and how it was answered, after the handshake (its GET/DELETE
  // timing is the transport's own); the handshake's requests by method and status.
  const posts = (from: number, to?: number) =>
    (httpFrames(px.frames.slice(from, to)) as Agent[])
      .filter((f) => f.method === 'POST')
      .map((f) => ({ rpc: f.body?.method ?? null, authorization: f.headers.authorization ?? null, status: f.status ?? null }))
  return {
    connect,
    handshake: posts(0, framesAtConnect),
    first,
    rotated,
    refused,
    afterConnect: posts(framesAtConnect),
    refreshes,
    localEnv,
    prepared,
  }
}
