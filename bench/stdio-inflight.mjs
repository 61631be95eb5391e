// Focused stdio benchmark: 64 requests in flight, mcp-native vs a raw JSONL client in plain Node
// (the floor), one client per process so that each gets a clean heap and CPU accounting.
//
//   node bench/stdio-inflight.mjs native|raw
//
// Prints calls/s and this process's CPU time (user, system µs) for the measured run. Alternate
// the two several times: on two cores the fixture server shares the machine with the client.
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStdioTransport } from 'mcp-native'

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', '__test__', 'fixture', 'server.mjs')
const N = 40000
const K = 64

async function run(call) {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: K }, async () => {
      while (next < N) {
        next++
        await call()
      }
    }),
  )
  return N / ((performance.now() - t0) / 1000)
}

async function measure(name, call) {
  await run(call) // warm-up
  const cpu0 = process.cpuUsage()
  const rate = await run(call)
  console.log(name, rate.toFixed(0), JSON.stringify(process.cpuUsage(cpu0)))
}

if (process.argv[2] === 'raw') {
  const child = spawn(process.execPath, [FIXTURE], { stdio: ['pipe', 'pipe', 'inherit'] })
  const pending = new Map()
  let id = 1
  let buf = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => {
    buf += chunk
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      const m = JSON.parse(line)
      const p = pending.get(m.id)
      if (p) {
        pending.delete(m.id)
        p(m.result)
      }
    }
  })
  const call = () =>
    new Promise((resolve) => {
      const i = String(id++)
      pending.set(i, resolve)
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }) + '\n')
    })
  await measure('raw', call)
  child.kill()
} else {
  const t = await createStdioTransport({ command: process.execPath, args: [FIXTURE] })
  await measure('native', () => t.request('tools/call', { name: 'echo', arguments: { message: 'hi' } }))
  await t.close()
}
