#!/usr/bin/env node
// The manager at scale (issue 31, SPEC 11.7's "must show"): N stdio fixture servers (default 50)
// through the root MCPManager (the agent's 18.3.4 behaviour), one of them unresponsive at first
// and without cached tools. Measures, in this runtime (`node bench/manager-scale.mjs`, or under
// Bun: `bun bench/manager-scale.mjs`):
//   - how long `discoverAndConnect` takes to return (the startup window, not the slow server),
//   - how long after the slow server answers its tools appear in `getTools()` (through
//     `setOnToolsChanged`; the server records when it read `initialize`, `--arrivals`),
//   - the RSS this process gained per connection (RSS with N servers connected minus RSS before,
//     garbage collected where the runtime allows, over N),
// and prints one JSON line. Options: --servers=N, --slow-ms=MS (when the slow server answers
// `initialize`, default 3000), --window-ms=MS (the startup window, default the agent's 250).
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { MCPManager } from 'mcp-native'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const FIXTURE = join(ROOT, '__test__', 'fixture', 'server.mjs')
const NODE = process.versions.bun ? 'node' : process.execPath
const opt = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback)
const SERVERS = opt('servers', 50)
const SLOW_MS = opt('slow-ms', 3000)
const WINDOW_MS = opt('window-ms', 250)

const gc = () => {
  if (globalThis.Bun) globalThis.Bun.gc(true)
  else globalThis.gc?.()
}
const rssMiB = () => process.memoryUsage().rss / 2 ** 20

const configs = {}
for (let i = 0; i < SERVERS - 1; i++) configs[`s${i}`] = { command: NODE, args: [FIXTURE, '--batch-writes'] }
configs.slow = { command: NODE, args: [FIXTURE, `--init-delay-ms=${SLOW_MS}`, '--arrivals'] }

gc()
const rssBefore = rssMiB()
const manager = new MCPManager(ROOT, null, async () => ({ configs, sources: {}, exaApiKeys: [] }))
let slowToolsAt
let slowToolsAtEpoch
manager.setOnToolsChanged((tools) => {
  if (slowToolsAt === undefined && tools.some((t) => t.mcpServerName === 'slow')) {
    slowToolsAt = performance.now()
    slowToolsAtEpoch = Date.now()
  }
})
/** @type {number[]} when each server's `connected` was told, from t0 */
const connectedAt = []
manager.addConnectionStatusListener((e) => {
  if (e.type === 'connected' && e.serverName !== 'slow') connectedAt.push(performance.now() - t0)
})
const t0 = performance.now()
const result = await manager.discoverAndConnect({ startupTimeoutMs: WINDOW_MS })
const returnedMs = performance.now() - t0
const connectedAtReturn = result.connectedServers.length
const startup = await manager.waitForStartup(60000)
const allMs = performance.now() - t0
// The slow server answers `initialize` SLOW_MS after it read it (`--arrivals` records when, by the
// same wall clock): from that answer to its tools in getTools() is the manager's part.
const arrivals = (await manager.getConnection('slow')?.transport.request('requests'))?.requests ?? []
const initAt = arrivals.find((r) => r.method === 'initialize')?.at
const slowToolsAfterAnswerMs = slowToolsAtEpoch === undefined || initAt === undefined ? null : slowToolsAtEpoch - (initAt + SLOW_MS)
const slowToolsMs = slowToolsAt === undefined ? null : slowToolsAt - t0
const firstConnectedMs = connectedAt.length ? Math.min(...connectedAt) : null
gc()
await new Promise((r) => setTimeout(r, 200))
gc()
const rssAfter = rssMiB()
const out = {
  runtime: process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`,
  servers: SERVERS,
  windowMs: WINDOW_MS,
  slowMs: SLOW_MS,
  discoverAndConnectReturnedMs: Math.round(returnedMs),
  connectedAtReturn,
  allConnectedMs: Math.round(allMs),
  connected: startup.connected.length,
  pending: startup.pending.length,
  failed: startup.failed.length,
  slowToolsMs: slowToolsMs === null ? null : Math.round(slowToolsMs),
  slowToolsAfterAnswerMs: slowToolsAfterAnswerMs === null ? null : Math.round(slowToolsAfterAnswerMs),
  firstFastConnectedMs: firstConnectedMs === null ? null : Math.round(firstConnectedMs),
  tools: manager.getTools().length,
  rssBeforeMiB: Math.round(rssBefore * 10) / 10,
  rssAfterMiB: Math.round(rssAfter * 10) / 10,
  rssPerConnectionKiB: Math.round(((rssAfter - rssBefore) * 1024) / SERVERS),
}
await manager.disconnectAll()
console.log(JSON.stringify(out))
