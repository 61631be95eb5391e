// Repro (found while writing the fault suite's callMCP checks; SPEC 4): `callMCP(url, method)`
// without options has no timeout at all ("as in the reference", json-rpc.js), but SPEC 4 says
// the timeout defaults to 60 s [fix] ("the reference had none, so a silent host hung the caller
// forever"). Against a server that never answers, the promise is still pending after 61 s.
// Exits 1 while the defect is there (takes 61 s).   node __test__/fault/repro/callmcp-no-default-timeout.mjs
import { spawn } from 'node:child_process'
import { callMCP } from 'mcp-native/compat-12.7'

const CHAOS = new URL('../chaos-server.mjs', import.meta.url).pathname
const server = spawn(process.execPath, [CHAOS, '--role=http', '--plan={"seed":1,"faults":{"stallP":1}}', '--max-life-ms=120000'], {
  stdio: ['ignore', 'pipe', 'inherit'],
})
const { port } = await new Promise((r) => server.stdout.once('data', (d) => r(JSON.parse(d))))
let state = 'pending'
callMCP(`http://127.0.0.1:${port}/mcp`, 'tools/list').then(
  () => (state = 'fulfilled'),
  (e) => (state = `rejected: ${e.message}`),
)
await new Promise((r) => setTimeout(r, 61000))
console.log(`callMCP without options after 61 s: ${state}`)
server.kill()
process.exitCode = state === 'pending' ? 1 : 0
process.exit()
