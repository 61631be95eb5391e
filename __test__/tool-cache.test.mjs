// SPEC 7.8, 7.9, 8.3, 8.11: MCPToolCache over an injected storage and over its own SQLite file
// (MCPToolCache.open). vitest (Node) and `bun test` (Bun).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import { MCPToolCache } from 'mcp-native/compat-12.7/tool-cache'
import { ROOT } from './helpers.mjs'

const T = 10000
const DAY_S = 24 * 60 * 60
const TOOLS = [
  { name: 'search', description: 'Find things', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
  { name: 'read', inputSchema: { type: 'object' } },
]
const CONFIG = { command: 'x', args: ['b', 'a'], env: { Z: '1', A: '2' } }
/** What the reference hashes for CONFIG: keys sorted at every level, array order kept. */
const CANONICAL = '{"args":["b","a"],"command":"x","env":{"A":"2","Z":"1"}}'

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** An AgentStorage over a Map, recording every write. */
function memoryStorage(entries = {}) {
  const rows = new Map(Object.entries(entries))
  const writes = []
  return {
    rows,
    writes,
    getCache(key) {
      return rows.has(key) ? rows.get(key) : null
    },
    setCache(key, value, expiresAtSec) {
      writes.push({ key, value, expiresAtSec })
      rows.set(key, value)
    },
  }
}

/** A logger that records its warn calls. */
function recorder() {
  const warnings = []
  return { warnings, logger: { warn: (message, context) => warnings.push([message, context]) } }
}

const nowSec = () => Math.floor(Date.now() / 1000)

let dir
const savedEnv = {}
const ENV_KEYS = ['HOME', 'PI_CODING_AGENT_DIR', 'PI_CONFIG_DIR']
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-native-cache-'))
  for (const k of ENV_KEYS) savedEnv[k] = process.env[k]
})
afterEach(() => {
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k]
    else process.env[k] = savedEnv[k]
  }
  rmSync(dir, { recursive: true, force: true })
})

describe('MCPToolCache over an injected storage', () => {
  it(
    'set then get returns the tools',
    async () => {
      const cache = new MCPToolCache(memoryStorage())
      await cache.set('a', CONFIG, TOOLS)
      expect(await cache.get('a', CONFIG)).toEqual(TOOLS)
    },
    T,
  )

  it(
    'reordered keys still hit; a changed command misses; undefined members do not count',
    async () => {
      const cache = new MCPToolCache(memoryStorage())
      await cache.set('a', CONFIG, TOOLS)
      expect(await cache.get('a', { env: { A: '2', Z: '1' }, args: ['b', 'a'], command: 'x' })).toEqual(TOOLS)
      expect(await cache.get('a', { ...CONFIG, timeout: undefined })).toEqual(TOOLS)
      expect(await cache.get('a', { ...CONFIG, command: 'y' })).toBeNull()
      expect(await cache.get('a', { ...CONFIG, args: ['a', 'b'] })).toBeNull()
      expect(await cache.get('b', CONFIG)).toBeNull()
    },
    T,
  )

  it(
    'writes key mcp_tools:<server>, {version,configHash,tools} and an expiry 30 days out',
    async () => {
      const storage = memoryStorage()
      const before = nowSec()
      await new MCPToolCache(storage).set('a', CONFIG, TOOLS)
      expect(storage.writes).toHaveLength(1)
      const [{ key, value, expiresAtSec }] = storage.writes
      expect(key).toBe('mcp_tools:a')
      expect(value).toBe(JSON.stringify({ version: 1, configHash: await sha256Hex(CANONICAL), tools: TOOLS }))
      expect(Number.isInteger(expiresAtSec)).toBe(true)
      expect(expiresAtSec).toBeGreaterThanOrEqual(before + 30 * DAY_S)
      expect(expiresAtSec).toBeLessThanOrEqual(nowSec() + 30 * DAY_S)
    },
    T,
  )

  it(
    'the hash is the reference one for nested records, arrays of records and integer-like keys',
    async () => {
      const storage = memoryStorage()
      const config = { url: 'https://h', type: 'http', headers: { b: '1', a: '2', 10: 'x', 9: 'y' }, auth: [{ z: 1, y: 2 }] }
      await new MCPToolCache(storage).set('h', config, TOOLS)
      // JSON.stringify of the key-sorted copy (integer-like keys first, as JS objects order them).
      const text = '{"auth":[{"y":2,"z":1}],"headers":{"9":"y","10":"x","a":"2","b":"1"},"type":"http","url":"https://h"}'
      expect(JSON.parse(storage.writes[0].value).configHash).toBe(await sha256Hex(text))
    },
    T,
  )

  it(
    'a row with version 2 is a miss, silently, and stays',
    async () => {
      const { warnings, logger } = recorder()
      const storage = memoryStorage()
      const cache = new MCPToolCache(storage, { logger })
      await cache.set('a', CONFIG, TOOLS)
      const row = JSON.parse(storage.rows.get('mcp_tools:a'))
      storage.rows.set('mcp_tools:a', JSON.stringify({ ...row, version: 2 }))
      expect(await cache.get('a', CONFIG)).toBeNull()
      expect(warnings).toEqual([])
      expect(storage.rows.has('mcp_tools:a')).toBe(true)
    },
    T,
  )

  it(
    'every other unusable row is a miss; only a parse failure warns',
    async () => {
      const hash = await sha256Hex(CANONICAL)
      const cases = {
        empty: '',
        array: '[1]',
        number: '5',
        null: 'null',
        noVersion: JSON.stringify({ configHash: hash, tools: TOOLS }),
        versionString: JSON.stringify({ version: '1', configHash: hash, tools: TOOLS }),
        hashNotString: JSON.stringify({ version: 1, configHash: 5, tools: TOOLS }),
        toolsNotArray: JSON.stringify({ version: 1, configHash: hash, tools: {} }),
        noTools: JSON.stringify({ version: 1, configHash: hash }),
        otherHash: JSON.stringify({ version: 1, configHash: hash.replace(/^./, hash[0] === '0' ? '1' : '0'), tools: TOOLS }),
        upperHash: JSON.stringify({ version: 1, configHash: hash.toUpperCase(), tools: TOOLS }),
      }
      const entries = Object.fromEntries(Object.entries(cases).map(([k, v]) => [`mcp_tools:${k}`, v]))
      const { warnings, logger } = recorder()
      const storage = memoryStorage(entries)
      const cache = new MCPToolCache(storage, { logger })
      for (const name of Object.keys(cases)) expect([name, await cache.get(name, CONFIG)]).toEqual([name, null])
      expect(warnings).toEqual([])
      // A hash mismatch does not delete the row.
      expect(storage.rows.get('mcp_tools:otherHash')).toBe(cases.otherHash)

      storage.rows.set('mcp_tools:bad', '{bad')
      expect(await cache.get('bad', CONFIG)).toBeNull()
      expect(warnings).toHaveLength(1)
      expect(warnings[0][0]).toBe('MCP tool cache parse failed')
      expect(warnings[0][1].serverName).toBe('bad')
      expect(warnings[0][1].error).toMatch(/^SyntaxError/)
      // The well-formed row still hits.
      storage.rows.set('mcp_tools:good', JSON.stringify({ version: 1, configHash: hash, tools: TOOLS }))
      expect(await cache.get('good', CONFIG)).toEqual(TOOLS)
    },
    T,
  )

  it(
    'a config that cannot be hashed: get misses and set writes nothing, both warn',
    async () => {
      const { warnings, logger } = recorder()
      const storage = memoryStorage()
      const cache = new MCPToolCache(storage, { logger })
      await cache.set('a', CONFIG, TOOLS)
      const cyclic = { command: 'x' }
      cyclic.self = cyclic
      expect(await cache.get('a', cyclic)).toBeNull()
      expect(await cache.get('a', { command: 'x', big: 1n })).toBeNull()
      await cache.set('b', cyclic, TOOLS)
      expect(storage.writes.map((w) => w.key)).toEqual(['mcp_tools:a'])
      expect(warnings.map(([m, c]) => [m, c.serverName])).toEqual([
        ['MCP tool cache hash failed', 'a'],
        ['MCP tool cache hash failed', 'a'],
        ['MCP tool cache hash failed', 'b'],
      ])
      expect(warnings[0][1].error).toMatch(/^TypeError/)
    },
    T,
  )

  it(
    'tools that cannot be serialized: set warns and writes nothing',
    async () => {
      const { warnings, logger } = recorder()
      const storage = memoryStorage()
      await new MCPToolCache(storage, { logger }).set('a', CONFIG, [{ name: 't', inputSchema: { type: 'object', n: 1n } }])
      expect(storage.writes).toEqual([])
      expect(warnings.map(([m]) => m)).toEqual(['MCP tool cache serialize failed'])
    },
    T,
  )

  it(
    'a storage that throws: get misses, set resolves; both warn, the host never sees it',
    async () => {
      const { warnings, logger } = recorder()
      const broken = {
        getCache() {
          throw new Error('disk gone')
        },
        setCache() {
          throw new Error('read-only')
        },
      }
      const cache = new MCPToolCache(broken, { logger })
      expect(await cache.get('a', CONFIG)).toBeNull()
      await expect(cache.set('a', CONFIG, TOOLS)).resolves.toBeUndefined()
      expect(warnings).toEqual([
        ['MCP tool cache read failed', { serverName: 'a', error: 'Error: disk gone' }],
        ['MCP tool cache write failed', { serverName: 'a', error: 'Error: read-only' }],
      ])
      // Not a storage at all, and a logger that throws: still a miss and a no-op.
      const bare = new MCPToolCache(
        {},
        {
          logger: {
            warn() {
              throw new Error('logger broke')
            },
          },
        },
      )
      expect(await bare.get('a', CONFIG)).toBeNull()
      await expect(bare.set('a', CONFIG, TOOLS)).resolves.toBeUndefined()
      expect(await new MCPToolCache(null).get('a', CONFIG)).toBeNull()
    },
    T,
  )

  it(
    'a storage whose promise never settles: a miss (and a dropped write) after the timeout',
    async () => {
      const { warnings, logger } = recorder()
      const hanging = { getCache: () => new Promise(() => {}), setCache: () => new Promise(() => {}) }
      const cache = new MCPToolCache(hanging, { logger, timeout: 100 })
      const started = Date.now()
      expect(await cache.get('a', CONFIG)).toBeNull()
      await cache.set('a', CONFIG, TOOLS)
      expect(Date.now() - started).toBeLessThan(3000)
      expect(warnings.map(([m, c]) => [m, c.error])).toEqual([
        ['MCP tool cache read failed', 'Error: MCP tool cache storage getCache timed out after 100ms'],
        ['MCP tool cache write failed', 'Error: MCP tool cache storage setCache timed out after 100ms'],
      ])
      // An async storage that does answer works like a synchronous one.
      const rows = new Map()
      const async = { getCache: async (k) => rows.get(k) ?? null, setCache: async (k, v) => void rows.set(k, v) }
      const asyncCache = new MCPToolCache(async)
      await asyncCache.set('a', CONFIG, TOOLS)
      expect(await asyncCache.get('a', CONFIG)).toEqual(TOOLS)
    },
    T,
  )

  it(
    'is silent without a logger',
    async () => {
      const original = console.warn
      const seen = []
      console.warn = (...args) => seen.push(args)
      try {
        const cache = new MCPToolCache(memoryStorage({ 'mcp_tools:a': '{bad' }))
        expect(await cache.get('a', CONFIG)).toBeNull()
      } finally {
        console.warn = original
      }
      expect(seen).toEqual([])
    },
    T,
  )
})

describe('MCPToolCache.open: the SQLite store', () => {
  it(
    'round trip; the row is mcp_tools:a and expires about 30 days out; version 2 is a miss',
    async () => {
      const file = join(dir, 'c.db')
      const cache = MCPToolCache.open(file)
      try {
        expect(cache.storage.path).toBe(file)
        await cache.set('a', CONFIG, TOOLS)
        expect(await cache.get('a', CONFIG)).toEqual(TOOLS)
        expect(await cache.get('a', { ...CONFIG, command: 'y' })).toBeNull()

        // Read the file through a second connection.
        const other = MCPToolCache.open(file)
        try {
          const row = other.storage.getCache('mcp_tools:a')
          expect(JSON.parse(row)).toEqual({ version: 1, configHash: await sha256Hex(CANONICAL), tools: TOOLS })
          expect(Math.abs(other.storage.expiresAt('mcp_tools:a') - (nowSec() + 2592000))).toBeLessThanOrEqual(2)
          expect(other.storage.getCache('mcp_tools:b')).toBeNull()
          expect(other.storage.expiresAt('mcp_tools:b')).toBeNull()

          other.storage.setCache('mcp_tools:a', JSON.stringify({ ...JSON.parse(row), version: 2 }), nowSec() + 60)
          expect(await cache.get('a', CONFIG)).toBeNull()
        } finally {
          other.close()
        }
      } finally {
        cache.close()
      }
    },
    T,
  )

  it(
    'expiry is honoured: a row whose expires_at has passed is a miss',
    async () => {
      const cache = MCPToolCache.open(join(dir, 'e.db'))
      try {
        await cache.set('a', CONFIG, TOOLS)
        const value = cache.storage.getCache('mcp_tools:a')
        const past = nowSec() - 5
        cache.storage.setCache('mcp_tools:a', value, past)
        expect(cache.storage.getCache('mcp_tools:a')).toBeNull()
        expect(await cache.get('a', CONFIG)).toBeNull()
        expect(cache.storage.expiresAt('mcp_tools:a')).toBe(past)
        // An upsert with a later expiry makes it live again.
        cache.storage.setCache('mcp_tools:a', value, nowSec() + 60)
        expect(await cache.get('a', CONFIG)).toEqual(TOOLS)
      } finally {
        cache.close()
      }
    },
    T,
  )

  it(
    'a second process reads what the first wrote, and the first reads its answer',
    async () => {
      const file = join(dir, 'shared.db')
      const cache = MCPToolCache.open(file)
      try {
        await cache.set('a', { command: 'x' }, TOOLS)
        const script = join(dir, 'child.cjs')
        writeFileSync(
          script,
          `const { MCPToolCache } = require(${JSON.stringify(join(ROOT, 'lib', 'entries', 'tool-cache.js'))})
const cache = MCPToolCache.open(process.argv[2])
;(async () => {
  const tools = await cache.get('a', { command: 'x' })
  await cache.set('b', { command: 'y' }, [{ name: 'from-child', inputSchema: { type: 'object' } }])
  cache.close()
  process.stdout.write(JSON.stringify(tools))
})()
`,
        )
        // The parent keeps its connection open meanwhile (WAL: both use the file at once).
        const child = spawnSync(process.execPath, [script, file], { encoding: 'utf8', timeout: 8000 })
        expect(child.stderr).toBe('')
        expect(child.status).toBe(0)
        expect(JSON.parse(child.stdout)).toEqual(TOOLS)
        expect(await cache.get('b', { command: 'y' })).toEqual([{ name: 'from-child', inputSchema: { type: 'object' } }])
      } finally {
        cache.close()
      }
    },
    T,
  )

  it(
    'default file: <$PI_CODING_AGENT_DIR>/mcp-cache.db, else ~/<$PI_CONFIG_DIR or .omp>/agent/, parents created',
    async () => {
      process.env.PI_CODING_AGENT_DIR = join(dir, 'agent-override')
      const a = MCPToolCache.open()
      expect(a.storage.path).toBe(join(dir, 'agent-override', 'mcp-cache.db'))
      expect(statSync(a.storage.path).isFile()).toBe(true)
      expect(statSync(join(dir, 'agent-override')).mode & 0o777).toBe(0o700)
      a.close()

      delete process.env.PI_CODING_AGENT_DIR
      process.env.HOME = join(dir, 'home')
      delete process.env.PI_CONFIG_DIR
      const b = MCPToolCache.open()
      expect(b.storage.path).toBe(join(dir, 'home', '.omp', 'agent', 'mcp-cache.db'))
      b.close()

      process.env.PI_CONFIG_DIR = '.pi'
      const c = MCPToolCache.open()
      expect(c.storage.path).toBe(join(dir, 'home', '.pi', 'agent', 'mcp-cache.db'))
      await c.set('a', CONFIG, TOOLS)
      c.close()
      const again = MCPToolCache.open(pathToFileURL(join(dir, 'home', '.pi', 'agent', 'mcp-cache.db')))
      expect(await again.get('a', CONFIG)).toEqual(TOOLS)
      again.close()
    },
    T,
  )

  it(
    'a file that cannot be opened throws; a closed cache misses and drops writes',
    async () => {
      writeFileSync(join(dir, 'plain'), 'x')
      let error
      try {
        MCPToolCache.open(join(dir, 'plain', 'c.db'))
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(Error)
      expect(error.code).toBe('EEXIST')
      expect(error.syscall).toBe('mkdir')

      writeFileSync(join(dir, 'junk.db'), 'z'.repeat(4096))
      expect(() => MCPToolCache.open(join(dir, 'junk.db'))).toThrow(/not a database/)

      const { warnings, logger } = recorder()
      const cache = MCPToolCache.open(join(dir, 'closed.db'), { logger })
      await cache.set('a', CONFIG, TOOLS)
      cache.close()
      cache.close()
      expect(await cache.get('a', CONFIG)).toBeNull()
      await cache.set('a', CONFIG, TOOLS)
      expect(warnings.map(([m, c]) => [m, c.error])).toEqual([
        ['MCP tool cache read failed', 'Error: MCP tool cache store: the store is closed'],
        ['MCP tool cache write failed', 'Error: MCP tool cache store: the store is closed'],
      ])
      // The data is still in the file.
      const reopened = MCPToolCache.open(join(dir, 'closed.db'))
      expect(await reopened.get('a', CONFIG)).toEqual(TOOLS)
      reopened.close()
      // close() of an injected storage leaves it alone.
      const storage = memoryStorage()
      new MCPToolCache(storage).close()
      expect(storage.getCache('x')).toBeNull()
    },
    T,
  )

  it(
    'a non-finite expiry is refused by the store',
    () => {
      const cache = MCPToolCache.open(join(dir, 'n.db'))
      try {
        expect(() => cache.storage.setCache('k', 'v', Number.NaN)).toThrow(/finite/)
        expect(cache.storage.getCache('k')).toBeNull()
      } finally {
        cache.close()
      }
    },
    T,
  )
})
