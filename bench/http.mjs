// HTTP benchmark: mcp-native's client (connectToServer + callTool) and its bare HttpTransport vs
// the official TypeScript SDK's Client over its Streamable HTTP transport, in the same run, against the project's HTTP fixture server on loopback. Every client
// does MCP `tools/call`; `echo` answers with JSON, `echo-sse` with an SSE stream.
//
//   node --no-warnings bench/http.mjs [--quick]   (the SDK floods MaxListenersExceededWarning:
//   it leaks abort listeners, see SPEC 3.1)
//
// Prints medians over the rounds and the ratios; writes bench/results/http.json.
import { spawn } from 'node:child_process'
import { join } from 'node:path'

import { createHttpTransport } from 'mcp-native'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { NativeClient, NativeConnection, ROOT, SdkClient, inFlightRate, medians, report, sequentialRate } from './lib.mjs'

const quick = process.argv.includes('--quick')
const SEQ = quick ? 300 : 1500
const PAR_TOTAL = quick ? 1000 : 6000
const IN_FLIGHT = 32
const ROUNDS = quick ? 1 : 5

const server = spawn(process.execPath, [join(ROOT, '__test__', 'fixture', 'http-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
const { port } = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(String(d)))))
const url = `http://127.0.0.1:${port}/mcp`

const sequential = (c, tool) => sequentialRate((i) => c.callTool(tool, { message: `hi${i}` }), SEQ)
const parallel = (c, tool) => inFlightRate(() => c.callTool(tool, { message: 'hi' }), PAR_TOTAL, IN_FLIGHT)

const cases = {
  'JSON sequential calls/s': (c) => sequential(c, 'echo'),
  [`JSON ${IN_FLIGHT} in flight calls/s`]: (c) => parallel(c, 'echo'),
  'SSE sequential calls/s': (c) => sequential(c, 'echo-sse'),
  [`SSE ${IN_FLIGHT} in flight calls/s`]: (c) => parallel(c, 'echo-sse'),
}
const clients = {
  native: () => NativeConnection.start('fixture', { type: 'http', url }),
  transport: async () => NativeClient.start(await createHttpTransport({ type: 'http', url })),
  sdk: () => SdkClient.start(new StreamableHTTPClientTransport(new URL(url))),
}
const results = await medians({ clients, cases, rounds: ROUNDS })
server.kill()
report(results, 'http.json')
