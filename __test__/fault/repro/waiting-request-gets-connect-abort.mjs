// Repro (fault suite, unclear-error): a request made on an MCPClient while it connects waits
// for the connection; when the *connect* is aborted with its own signal, the waiting request is
// rejected with that signal's reason — an AbortError (or whatever the reason is) that the
// request's caller never asked for, with no `code`. A caller that treats AbortError as "the user
// cancelled" misreads it. The same happens to a second `client.connect()` (without a signal)
// made while the first one (with a signal) is in progress: it shares that attempt and rejects
// with the first caller's abort reason (fault suite seed 2628967329). Expected: the waiting request fails with a transport error (for
// example `Transport not connected` / MCP_NOT_CONNECTED, the connect's reason as `cause`).
// Exits 1 while the defect is there.   node __test__/fault/repro/waiting-request-gets-connect-abort.mjs
import { MCPClient } from 'mcp-native/compat-12.7'

const CHAOS = new URL('../chaos-server.mjs', import.meta.url).pathname
const client = new MCPClient('slow', {
  command: process.execPath,
  args: [CHAOS, '--plan={"seed":1,"faults":{"initDelayMs":500}}'],
  killGraceMs: 50,
})
const connectAbort = new AbortController()
const connecting = client.connect({ signal: connectAbort.signal })
// (outcomes taken at once: the call may settle before the aborted connect does)
const call = client.callTool('echo', { message: 'hi' }).then(
  () => null,
  (e) => e,
) // no signal of its own
const second = client.connect().then(
  () => null,
  (e) => e,
) // no signal of its own either
setTimeout(() => connectAbort.abort(), 50)
await connecting.catch(() => {})
const err = await call
const err2 = await second
console.log('the call without a signal rejected with:', err?.name, err?.message, 'code:', err?.code)
console.log('the second connect() without a signal rejected with:', err2?.name, err2?.message, 'code:', err2?.code)
await client.close()
process.exitCode = err === connectAbort.signal.reason || err2 === connectAbort.signal.reason ? 1 : 0
