// What the benchmarks share: the measuring loops, the rounds with medians, and the report.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectToServer, callTool, disconnectServer } from 'mcp-native'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Calls per second of `call(i)` made one after another, `n` times. */
export async function sequentialRate(call, n) {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await call(i)
  return n / ((performance.now() - t0) / 1000)
}

/** Calls per second of `total` calls kept `inFlight` at a time. */
export async function inFlightRate(call, total, inFlight) {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await call(next++)
    }),
  )
  return total / ((performance.now() - t0) / 1000)
}

/** mcp-native's client layer, the way agents call it: connectToServer, then callTool(connection). */
export class NativeConnection {
  static async start(name, config) {
    const c = new NativeConnection()
    c.connection = await connectToServer(name, config)
    return c
  }
  callTool(name, args) {
    return callTool(this.connection, name, args)
  }
  close() {
    return disconnectServer(this.connection)
  }
}

/** mcp-native's bare transport, after the MCP handshake by hand, with the same face. */
export class NativeClient {
  static async start(transport) {
    const c = new NativeClient()
    c.t = transport
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

/** The official SDK's client over `transport`, with the `callTool`/`close` face the benches use. */
export class SdkClient {
  static async start(transport) {
    const c = new SdkClient()
    c.client = new Client({ name: 'sdk', version: '1' })
    await c.client.connect(transport)
    return c
  }
  callTool(name, args) {
    return this.client.callTool({ name, arguments: args })
  }
  close() {
    return this.client.close()
  }
}

/**
 * Runs every case on every client, `rounds` times, clients interleaved within a round so that
 * machine noise hits all alike; each case gets a warm-up pass first. Returns the median per case
 * and client: on two cores the server shares the machine with the client, and single runs swing
 * by ±20%.
 */
export async function medians({ clients, cases, rounds }) {
  const results = {}
  for (const name of Object.keys(cases)) results[name] = {}
  for (let round = 0; round < rounds; round++) {
    for (const [cname, start] of Object.entries(clients)) {
      const c = await start()
      for (const [name, fn] of Object.entries(cases)) {
        await fn(c)
        ;(results[name][cname] ??= []).push(await fn(c))
      }
      await c.close()
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  for (const r of Object.values(results)) for (const c of Object.keys(r)) r[c] = median(r[c])
  return results
}

/** Prints a table with `native/<other>` ratios and writes bench/results/<file>. */
export function report(results, file) {
  console.table(
    Object.entries(results).map(([name, r]) => {
      const row = { case: name }
      for (const [c, v] of Object.entries(r)) row[c] = v.toFixed(0)
      for (const c of Object.keys(r)) if (c !== 'native') row[`native/${c}`] = (r.native / r[c]).toFixed(2)
      return row
    }),
  )
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
  writeFileSync(join(ROOT, 'bench', 'results', file), JSON.stringify({ date: new Date().toISOString(), results }, null, 2))
}
