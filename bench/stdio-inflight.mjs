// Focused stdio benchmark: 64 requests in flight, mcp-native vs a raw JSONL client in plain Node
// (the floor), one client per process so that each gets a clean heap and CPU accounting.
//
//   node bench/stdio-inflight.mjs native|client|compat|raw [in-flight, default 64; 1 = sequential] [calls]
//
// native: the package's transport (`createStdioTransport` + `request`); client: the agent's call
// path (`connectToServer` + `callTool`), what `npm run bench` measures; compat: that path in the
// 12.7 profile (no mapping of errors to 18.3.4's); raw: the floor.
// (A profiling aid beside `npm run bench`, bench/run.mjs.) The fixture runs in its benchmark mode
// (--batch-writes). Prints calls/s and the CPU time per call of this process and of the server. Alternate
// the two several times: on two cores the fixture server shares the machine with the client.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { callTool, connectToServer, createStdioTransport, disconnectServer } from 'mcp-native'
import { inFlightRate, sequentialRate } from './rates.mjs'

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', '__test__', 'fixture', 'server.mjs')
const K = Number(process.argv[3] ?? 64)
const N = Number(process.argv[4] ?? (K === 1 ? 10000 : 40000))

const run = (call) => (K === 1 ? sequentialRate(call, N) : inFlightRate(call, N, K))

/** CPU time (ms) the server process has used so far. */
function serverCpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100 // utime + stime, in 100 Hz ticks
}

async function measure(name, call, serverPid) {
  await run(call) // warm-up
  const cpu0 = process.cpuUsage()
  const s0 = serverCpuMs(serverPid)
  const rate = await run(call)
  const cpu = process.cpuUsage(cpu0)
  const us = (x) => ((x / N) * 1).toFixed(1)
  console.log(
    `${name} ${rate.toFixed(0)} calls/s; client CPU µs/call user ${us(cpu.user)} system ${us(cpu.system)}; server CPU µs/call ${(((serverCpuMs(serverPid) - s0) * 1000) / N).toFixed(1)}`,
  )
}

if (process.argv[2] === 'raw') {
  const child = spawn(process.execPath, [FIXTURE, '--batch-writes'], { stdio: ['pipe', 'pipe', 'inherit'] })
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
      const i = JSON.stringify(id++) // not String(): see NOTES.md, "Young collections"
      pending.set(i, resolve)
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } })}\n`,
      )
    })
  await measure('raw', call, child.pid)
  child.kill()
} else if (process.argv[2] === 'client' || process.argv[2] === 'compat') {
  // client: the root (the agent as it ships today, its errors mapped to 18.3.4's); compat: the
  // same call path in the 12.7 profile (the package's errors as they are).
  const api = process.argv[2] === 'client' ? { callTool, connectToServer, disconnectServer } : await import('mcp-native/compat-12.7/client')
  const c = await api.connectToServer('bench', { command: process.execPath, args: [FIXTURE, '--batch-writes'] })
  await measure(process.argv[2], () => api.callTool(c, 'echo', { message: 'hi' }), c.transport.pid)
  await api.disconnectServer(c)
} else {
  const t = await createStdioTransport({ command: process.execPath, args: [FIXTURE, '--batch-writes'] })
  await measure('native', () => t.request('tools/call', { name: 'echo', arguments: { message: 'hi' } }), t.pid)
  await t.close()
}
