// SPEC 11.6 (Linux): the stdio server runs in its own session (setsid), so it is neither in the
// agent's process group nor its session; the child's working directory and arguments.
import { readFileSync } from 'node:fs'
import type { Ctx } from '../harness.ts'

function stat(pid: number) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { pgrp: Number(fields[2]), session: Number(fields[3]) }
}

export default async function (ctx: Ctx) {
  if (process.platform !== 'linux') return { skipped: process.platform }
  const client = await ctx.mod('mcp/client.ts')
  const conn = await ctx.within('connect', 10_000, client.connectToServer('fx', ctx.stdio(['one', 'two words'], { cwd: ctx.tmp })))
  ctx.defer(() => client.disconnectServer(conn))
  const { pid } = await ctx.within('pid', 5000, conn.transport.request('pid', {}))
  const argv = await ctx.within('argv', 5000, conn.transport.request('argv', {}))
  const child = stat(pid)
  const self = stat(process.pid)
  return {
    ownSession: child.session === pid,
    ownGroup: child.pgrp === pid,
    sameSessionAsHost: child.session === self.session,
    sameGroupAsHost: child.pgrp === self.pgrp,
    argv,
  }
}
