// Repro (fault suite, fd-leak on every HTTP case): HttpTransport.close() leaves its pooled
// keep-alive TCP connection open; it goes only when the transport object is garbage-collected
// (or after reqwest's 90 s pool idle timeout, or the server's own idle timeout). An MCPClient
// keeps its closed transport, so a reconnecting client collects one open socket per attempt.
// Exits 1 while the defect is there.   node __test__/fault/repro/http-close-keeps-socket.mjs
import { spawn } from 'node:child_process'
import { readdirSync, readlinkSync } from 'node:fs'
import { createHttpTransport } from 'mcp-native/compat-12.7'

const CHAOS = new URL('../chaos-server.mjs', import.meta.url).pathname
const sockets = () =>
  readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`)
      } catch {
        return ''
      }
    })
    .filter((t) => t.startsWith('socket:'))
const server = spawn(process.execPath, [CHAOS, '--role=http', '--plan={"seed":1,"faults":{"sseP":0}}'], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const { port } = await new Promise((r) => server.stdout.once('data', (d) => r(JSON.parse(d))))
const init = { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'repro', version: '1' } }
async function cycle() {
  const t = await createHttpTransport({ type: 'http', url: `http://127.0.0.1:${port}/mcp`, timeout: 2000 })
  await t.request('initialize', init)
  await t.close()
  return t
}
await cycle() // the runtime and HTTP stack come up once per process
await new Promise((r) => setTimeout(r, 200))
const before = sockets()
const kept = await cycle()
await new Promise((r) => setTimeout(r, 1000))
const extra = sockets().filter((s) => !before.includes(s))
console.log(`open sockets 1 s after close(): ${extra.length} more than before (${extra.join(', ')}); transport.connected=${kept.connected}`)
server.kill()
process.exitCode = extra.length > 0 ? 1 : 0
