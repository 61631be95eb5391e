// Stdio benchmark: mcp-native's client (connectToServer + callTool) vs its bare transport vs a raw
// JSONL client in plain Node (the floor for any JS-side client) vs the official TypeScript SDK's
// Client, all in the same run against the same fixture server.
// Every client does MCP `tools/call` of the fixture's `echo` (small) and `big` (large result).
//
//   node bench/stdio.mjs [--quick]
//
// Prints a table of medians over the rounds and the ratios; writes bench/results/stdio.json.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

import { createStdioTransport } from 'mcp-native'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { NativeClient, NativeConnection, ROOT, SdkClient, inFlightRate, medians, report, sequentialRate } from './lib.mjs'

const FIXTURE = join(ROOT, '__test__', 'fixture', 'server.mjs')
const quick = process.argv.includes('--quick')
const SEQ = quick ? 500 : 3000
const PAR_TOTAL = quick ? 2000 : 20000
const IN_FLIGHT = 64
const BIG_BYTES = 4 * 1024 * 1024
const BIG_N = quick ? 5 : 20
const ROUNDS = quick ? 1 : 5

/** Plain-Node JSONL client: spawn, split stdout on \n, JSON.parse, resolve by id. The floor. */
class RawClient {
  static async start() {
    const c = new RawClient()
    c.child = spawn(process.execPath, [FIXTURE], { stdio: ['pipe', 'pipe', 'inherit'] })
    c.pending = new Map()
    c.nextId = 1
    let buf = ''
    c.child.stdout.setEncoding('utf8')
    c.child.stdout.on('data', (chunk) => {
      buf += chunk
      let nl
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        if (!line.trim()) continue
        const msg = JSON.parse(line)
        const p = c.pending.get(msg.id)
        if (p) {
          c.pending.delete(msg.id)
          msg.error ? p.reject(new Error(msg.error.message)) : p.resolve(msg.result)
        }
      }
    })
    await c.request('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })
    c.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', params: {} })}\n`)
    return c
  }
  request(method, params) {
    const id = String(this.nextId++)
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  }
  callTool(name, args) {
    return this.request('tools/call', { name, arguments: args })
  }
  async close() {
    this.child.stdin.end()
    this.child.kill()
  }
}

const sequential = (c) => sequentialRate((i) => c.callTool('echo', { message: `hi${i}` }), SEQ)
const parallel = (c) => inFlightRate(() => c.callTool('echo', { message: 'hi' }), PAR_TOTAL, IN_FLIGHT)

async function big(c) {
  const t0 = performance.now()
  for (let i = 0; i < BIG_N; i++) {
    const r = await c.callTool('big', { bytes: BIG_BYTES })
    if (r.content[0].text.length !== BIG_BYTES) throw new Error('bad big result')
  }
  return (BIG_N * BIG_BYTES) / (1024 * 1024) / ((performance.now() - t0) / 1000)
}

const clients = {
  native: () => NativeConnection.start('fixture', { command: process.execPath, args: [FIXTURE] }),
  transport: async () => NativeClient.start(await createStdioTransport({ command: process.execPath, args: [FIXTURE] })),
  raw: () => RawClient.start(),
  sdk: () => SdkClient.start(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'inherit' })),
}
const cases = {
  'sequential calls/s': sequential,
  [`${IN_FLIGHT} in flight calls/s`]: parallel,
  [`${BIG_BYTES >> 20} MiB results MiB/s`]: big,
}
report(await medians({ clients, cases, rounds: ROUNDS }), 'stdio.json')
