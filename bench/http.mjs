// HTTP benchmark: mcp-native's HttpTransport vs the official TypeScript SDK's Streamable HTTP
// client, in the same run, against the project's HTTP fixture server on loopback. Every client
// does MCP `tools/call`; `echo` answers with JSON, `echo-sse` with an SSE stream.
//
//   node --no-warnings bench/http.mjs [--quick]   (the SDK floods MaxListenersExceededWarning:
//   it leaks abort listeners, see SPEC 3.1)
//
// Prints medians over the rounds and the ratios; writes bench/results/http.json.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

import { createHttpTransport } from 'mcp-native'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const quick = process.argv.includes('--quick')
const SEQ = quick ? 300 : 1500
const PAR_TOTAL = quick ? 1000 : 6000
const IN_FLIGHT = 32
const ROUNDS = quick ? 1 : 5

const server = spawn(process.execPath, [join(ROOT, '__test__', 'fixture', 'http-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
const { port } = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(String(d)))))
const url = `http://127.0.0.1:${port}/mcp`

class NativeClient {
  static async start() {
    const c = new NativeClient()
    c.t = await createHttpTransport({ type: 'http', url })
    await c.t.request('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'native', version: '1' } })
    await c.t.notify('notifications/initialized')
    return c
  }
  callTool(name, args) {
    return this.t.request('tools/call', { name, arguments: args })
  }
  close() {
    return this.t.close()
  }
}

class SdkClient {
  static async start() {
    const c = new SdkClient()
    c.client = new Client({ name: 'sdk', version: '1' })
    await c.client.connect(new StreamableHTTPClientTransport(new URL(url)))
    return c
  }
  callTool(name, args) {
    return this.client.callTool({ name, arguments: args })
  }
  close() {
    return this.client.close()
  }
}

async function sequential(c, tool) {
  const t0 = performance.now()
  for (let i = 0; i < SEQ; i++) await c.callTool(tool, { message: 'hi' + i })
  return SEQ / ((performance.now() - t0) / 1000)
}

async function parallel(c, tool) {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < PAR_TOTAL) {
        next++
        await c.callTool(tool, { message: 'hi' })
      }
    }),
  )
  return PAR_TOTAL / ((performance.now() - t0) / 1000)
}

const cases = {
  'JSON sequential calls/s': (c) => sequential(c, 'echo'),
  [`JSON ${IN_FLIGHT} in flight calls/s`]: (c) => parallel(c, 'echo'),
  'SSE sequential calls/s': (c) => sequential(c, 'echo-sse'),
  [`SSE ${IN_FLIGHT} in flight calls/s`]: (c) => parallel(c, 'echo-sse'),
}
const clients = { native: NativeClient, sdk: SdkClient }
const results = {}
for (const name of Object.keys(cases)) results[name] = {}
for (let round = 0; round < ROUNDS; round++) {
  for (const [cname, Cls] of Object.entries(clients)) {
    const c = await Cls.start()
    for (const [name, fn] of Object.entries(cases)) {
      await fn(c) // warm-up
      ;(results[name][cname] ??= []).push(await fn(c))
    }
    await c.close()
  }
}
server.kill()

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const r of Object.values(results)) for (const c of Object.keys(r)) r[c] = median(r[c])
console.table(
  Object.entries(results).map(([name, r]) => ({
    case: name,
    native: r.native.toFixed(0),
    sdk: r.sdk.toFixed(0),
    'native/sdk': (r.native / r.sdk).toFixed(2),
  })),
)
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
writeFileSync(join(ROOT, 'bench', 'results', 'http.json'), JSON.stringify({ date: new Date().toISOString(), results }, null, 2))
