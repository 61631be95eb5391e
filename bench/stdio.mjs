// Stdio benchmark: mcp-native vs a raw JSONL client in plain Node (the floor for any JS-side
// client) vs the official TypeScript SDK, all in the same run against the same fixture server.
// Every client does MCP `tools/call` of the fixture's `echo` (small) and `big` (large result).
//
//   node bench/stdio.mjs [--quick]
//
// Prints a table of medians over the rounds and the ratios; writes bench/results/stdio.json.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

import { createStdioTransport } from 'mcp-native'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
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
    c.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', params: {} }) + '\n')
    return c
  }
  request(method, params) {
    const id = String(this.nextId++)
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
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

class NativeClient {
  static async start() {
    const c = new NativeClient()
    c.t = await createStdioTransport({ command: process.execPath, args: [FIXTURE] })
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
    await c.client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], stderr: 'inherit' }))
    return c
  }
  callTool(name, args) {
    return this.client.callTool({ name, arguments: args })
  }
  close() {
    return this.client.close()
  }
}

async function sequential(c) {
  const t0 = performance.now()
  for (let i = 0; i < SEQ; i++) await c.callTool('echo', { message: 'hi' + i })
  return SEQ / ((performance.now() - t0) / 1000)
}

async function parallel(c) {
  let next = 0
  const t0 = performance.now()
  async function worker() {
    while (next < PAR_TOTAL) {
      next++
      await c.callTool('echo', { message: 'hi' })
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  return PAR_TOTAL / ((performance.now() - t0) / 1000)
}

async function big(c) {
  const t0 = performance.now()
  for (let i = 0; i < BIG_N; i++) {
    const r = await c.callTool('big', { bytes: BIG_BYTES })
    if (r.content[0].text.length !== BIG_BYTES) throw new Error('bad big result')
  }
  return (BIG_N * BIG_BYTES) / (1024 * 1024) / ((performance.now() - t0) / 1000)
}

const clients = { native: NativeClient, raw: RawClient, sdk: SdkClient }
const cases = { 'sequential calls/s': sequential, [`${IN_FLIGHT} in flight calls/s`]: parallel, [`${BIG_BYTES >> 20} MiB results MiB/s`]: big }
const results = {}
for (const name of Object.keys(cases)) results[name] = {}

for (let round = 0; round < ROUNDS; round++) {
  // Interleave clients within each round so machine noise hits all of them alike.
  for (const [cname, Cls] of Object.entries(clients)) {
    const c = await Cls.start()
    for (const [name, fn] of Object.entries(cases)) {
      await fn(c) // warm-up
      ;(results[name][cname] ??= []).push(await fn(c))
    }
    await c.close()
  }
}

// The median of the rounds: on two cores the server shares the machine with the client, and
// single runs swing by ±20%.
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const r of Object.values(results)) for (const c of Object.keys(r)) r[c] = median(r[c])
const rows = Object.entries(results).map(([name, r]) => ({
  case: name,
  native: r.native.toFixed(0),
  raw: r.raw.toFixed(0),
  sdk: r.sdk.toFixed(0),
  'native/raw': (r.native / r.raw).toFixed(2),
  'native/sdk': (r.native / r.sdk).toFixed(2),
}))
console.table(rows)
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
writeFileSync(join(ROOT, 'bench', 'results', 'stdio.json'), JSON.stringify({ date: new Date().toISOString(), results }, null, 2))
