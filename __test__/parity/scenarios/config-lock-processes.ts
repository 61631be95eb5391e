// 11.5 (17.1.0) across processes: three Bun processes of this tree each add 25 servers to one
// config file at once (each process 25 concurrent updates) through the tree's config-writer.ts
// (the agent's lock, pi-utils' withFileLock, in both trees: the package's writer takes it through
// the configuration call); none is lost, the file stays valid JSON.
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { type Ctx, within } from '../harness.ts'

const PROCESSES = 3
const EACH = 25

export default async function (ctx: Ctx) {
  const file = `${ctx.project}/.omp/mcp.json`
  const script = `${ctx.tmp}/config-writer-process.ts`
  writeFileSync(
    script,
    [
      'const [tree, file, prefix, count] = process.argv.slice(2)',
      "const w = await import(tree + '/src/mcp/config-writer.ts')",
      'await Promise.all(Array.from({ length: Number(count) }, (_, i) =>',
      "  w.updateMCPServer(file, prefix + i, { command: 'node', args: [String(i)] })))",
      "process.stdout.write('done')",
    ].join('\n'),
  )
  const run = (prefix: string) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, [script, ctx.tree, file, prefix, String(EACH)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      ctx.defer(() => child.kill('SIGKILL'))
      let out = ''
      let err = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (err += d))
      child.on('close', (code) => resolve({ code, out, err: err.slice(0, 500) }))
    })
  const results = await within('writers', 40_000, Promise.all(Array.from({ length: PROCESSES }, (_, p) => run(`p${p}-`))))
  const config = JSON.parse(readFileSync(file, 'utf8'))
  const names = Object.keys(config.mcpServers ?? {})
  const expected = Array.from({ length: PROCESSES }, (_, p) => Array.from({ length: EACH }, (_, i) => `p${p}-${i}`)).flat()
  return {
    processes: results.map((r) => ({ code: r.code, out: r.out, err: r.code === 0 ? '' : r.err })),
    servers: names.length,
    missing: expected.filter((n) => !names.includes(n)),
    unexpected: names.filter((n) => !expected.includes(n)),
    schema: config.$schema ?? null,
    sample: config.mcpServers?.['p1-7'] ?? null,
  }
}
