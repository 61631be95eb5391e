// SPEC 11.4 auth hooks, "never after an accepted SSE stream": a request whose SSE answer drops
// before the answer is resumed with GET + Last-Event-ID. A resume refused with 401 asks the
// manager's onAuthError (a forced refresh of the agent's credential) once and resumes with the new
// token; a resume refused again fails the request without sending the POST again (the server has
// accepted it: it may have run a tool).
import { type Agent, type Ctx, agentAuthStorage, httpFrames, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const { MCPManager } = await ctx.mod('mcp/index.ts')
  const { base } = await ctx.httpFixture()
  const accepted = new Set(['tok-1'])
  let resumeRefusals = 0
  const px = await ctx.proxy(base, {
    gate: (f) => {
      const refuse = {
        status: 401,
        headers: { 'www-authenticate': 'Bearer realm="parity"', 'content-type': 'text/plain' },
        body: 'unauthorized',
      }
      if (f.method === 'GET' && f.headers['last-event-id'] && resumeRefusals > 0) {
        resumeRefusals--
        return refuse
      }
      return accepted.has(String(f.headers.authorization).replace(/^Bearer /, '')) ? undefined : refuse
    },
  })
  const auth = agentAuthStorage({
    'mcp_oauth:remote': { type: 'oauth', access: 'stale', refresh: 'r1', expires: Date.now() - 1000 },
  })
  const manager = new MCPManager(ctx.project)
  ctx.defer(() => manager.disconnectAll())
  manager.setAuthStorage(auth.storage)
  const remote = { type: 'http', url: `${px.base}/mcp`, auth: { type: 'oauth', credentialId: 'mcp_oauth:remote' } }
  const result = await ctx.within('connectServers', 15_000, manager.connectServers({ remote }, {}, undefined, 0))
  const connected = [...result.connectedServers]
  const transport = () => manager.getConnection('remote')?.transport
  const view = (from: number) =>
    (httpFrames(px.frames.slice(from)) as Agent[])
      .filter((f) => f.method === 'POST' || f.headers['last-event-id'])
      .map((f) => ({
        method: f.method,
        rpc: f.body?.method ?? null,
        resume: f.headers['last-event-id'] ? 'yes' : null,
        authorization: f.headers.authorization ?? null,
        status: f.status ?? null,
      }))

  // The resume is refused once; the refreshed token is accepted.
  let from = px.frames.length
  resumeRefusals = 1
  accepted.add('tok-2')
  const refreshedOnce = await settle(ctx.within('sse-drop', 10_000, transport().request('sse-drop', {})))
  const framesOnce = view(from)

  // Every resume is refused: the request fails, the POST is not sent again.
  from = px.frames.length
  resumeRefusals = 99
  accepted.add('tok-3')
  const refusedAlways = await settle(ctx.within('sse-drop refused', 10_000, transport().request('sse-drop', {})))
  const framesAlways = view(from)
  resumeRefusals = 0
  const after = await settle(ctx.within('echo', 5000, transport().request('echo', { ok: true })))
  return { connected, refreshedOnce, framesOnce, refusedAlways, framesAlways, after, refreshes: auth.refreshes }
}
