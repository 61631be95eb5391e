import { createStdioTransport } from 'mcp-native'
import { spawn } from 'node:child_process'
const FIXTURE = '/work/main/__test__/fixture/server.mjs'
const N = 40000, K = 64
async function run(call) {
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: K }, async () => { while (next < N) { next++; await call() } }))
  return N / ((performance.now() - t0) / 1000)
}
const mode = process.argv[2]
if (mode === 'native') {
  const t = await createStdioTransport({ command: process.execPath, args: [FIXTURE] })
  const call = () => t.request('tools/call', { name: 'echo', arguments: { message: 'hi' } })
  await run(call)
  const cpu0 = process.cpuUsage()
  console.log('native', (await run(call)).toFixed(0), JSON.stringify(process.cpuUsage(cpu0)))
  await t.close()
} else {
  const child = spawn(process.execPath, [FIXTURE], { stdio: ['pipe', 'pipe', 'inherit'] })
  const pending = new Map(); let id = 1; let buf = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => { buf += chunk; let nl; while ((nl = buf.indexOf('\n')) !== -1) { const line = buf.slice(0, nl); buf = buf.slice(nl + 1); const m = JSON.parse(line); const p = pending.get(m.id); if (p) { pending.delete(m.id); p(m.result) } } })
  const call = () => new Promise((res) => { const i = String(id++); pending.set(i, res); child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }) + '\n') })
  await run(call)
  const cpu0 = process.cpuUsage()
  console.log('raw', (await run(call)).toFixed(0), JSON.stringify(process.cpuUsage(cpu0)))
  child.kill()
}
