// Repro (fault suite, noted on bursts with a shared signal; not a failure): eleven requests in
// flight with one AbortSignal make Node print "MaxListenersExceededWarning: Possible EventTarget
// memory leak detected. 11 abort listeners added to [AbortSignal]": each pending request adds its
// own abort listener (removed when it settles, so nothing leaks). An agent that passes one
// session-wide signal to parallel tool calls gets the warning the README blames the SDK for.
// One listener per signal per transport (dispatching to its pending requests) would avoid it.
// Exits 1 while the warning appears.   node __test__/fault/repro/shared-signal-max-listeners.mjs
import { createStdioTransport } from 'mcp-native/compat-12.7'

const CHAOS = new URL('../chaos-server.mjs', import.meta.url).pathname
let warned = null
process.on('warning', (w) => {
  if (w.name === 'MaxListenersExceededWarning') warned = w.message
})
const t = await createStdioTransport({ command: process.execPath, args: [CHAOS, '--plan={"seed":1,"faults":{}}'], killGraceMs: 50 })
const signal = new AbortController().signal
await Promise.all(
  Array.from({ length: 11 }, (_, i) => t.request('tools/call', { name: 'echo', arguments: { message: `m${i}` } }, { signal })),
)
await t.close()
await new Promise((r) => setImmediate(r))
console.log(warned ? `warning: ${warned}` : 'no warning')
process.exitCode = warned ? 1 : 0
