// SPEC 11.4 headers: `headerPolicy: "origin-locked"` follows redirects by hand — configured headers
// kept on the configured origin and dropped on another one, at most 5 hops, a POST redirected with
// 301/302/303 refused — and without the policy the platform's redirects. Two origins on
// 127.0.0.1 (recording proxies in front of the HTTP fixture); the first answers some paths with a
// redirect itself.
import { type Agent, type Ctx, httpFrames, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const client = await ctx.mod('mcp/client.ts')
  const { base } = await ctx.httpFixture()
  const other = await ctx.proxy(base)
  const redirects: Record<string, { status: number; to: () => string }> = {
    '/hop': { status: 307, to: () => '/mcp' },
    '/away': { status: 308, to: () => `${other.base}/mcp` },
    '/loop': { status: 307, to: () => '/loop' },
    '/see-other': { status: 303, to: () => '/mcp' },
  }
  const first = await ctx.proxy(base, {
    gate: (f) => {
      const r = redirects[f.path]
      return r ? { status: r.status, headers: { location: r.to() } } : undefined
    },
  })
  const run = async (label: string, path: string, policy?: string) => {
    const from = { first: first.frames.length, other: other.frames.length }
    const config: Agent = { type: 'http', url: `${first.base}${path}`, headers: { 'X-Parity': 'configured' } }
    if (policy) config.headerPolicy = policy
    const out: Record<string, unknown> = {}
    const conn = await settle(ctx.within(`${label} connect`, 10_000, client.connectToServer(label, config)))
    if ('value' in conn) {
      out.tools = await settle(ctx.within(`${label} tools`, 5000, client.listTools(conn.value)).then((t: Agent[]) => t.map((x) => x.name)))
      await settle(ctx.within(`${label} close`, 5000, client.disconnectServer(conn.value)))
    } else out.connect = conn
    // What each origin received: method, path, the configured header, the answer.
    const view = (frames: Agent[]) =>
      (httpFrames(frames) as Agent[])
        .filter((f) => f.method !== 'DELETE' && f.method !== 'GET')
        .map((f) => ({
          method: f.method,
          path: f.path,
          rpc: f.body?.method ?? null,
          xParity: f.headers['x-parity'] ?? null,
          status: f.status ?? null,
        }))
    out.first = view(first.frames.slice(from.first))
    out.other = view(other.frames.slice(from.other))
    return out
  }
  return {
    sameOrigin: await run('same', '/hop', 'origin-locked'),
    crossOrigin: await run('cross', '/away', 'origin-locked'),
    tooMany: await run('loop', '/loop', 'origin-locked'),
    methodChanging: await run('see-other', '/see-other', 'origin-locked'),
    unlockedCross: await run('unlocked', '/away'),
  }
}
