// SPEC 11.2: the process-wide configuration call that takes the agent's own objects, and each hook
// in use — the tool objects' abort class, schema rule, intent rule, renderers and internal-URL
// router; the project directory (roots/list, a stdio server's cwd); the logger. Against the
// fixture server; vitest (Node) and `bun test` (Bun).
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { configureMCP as rootConfigure } from 'mcp-native'
import { connectToServer, disconnectServer } from 'mcp-native/client'
import { configureMCP, configuredHooks } from 'mcp-native/configure'
import { discoverAndLoadMCPTools } from 'mcp-native/loader'
import { resolveMCPTimeoutMs } from 'mcp-native/timeout'
import { MCPTool, ToolAbortError } from 'mcp-native/tool-bridge'
import { fixture } from './helpers.mjs'

const ALL = [
  'ToolAbortError',
  'normalizeSchemaForMCP',
  'schemaDeclaresIntentField',
  'renderMCPCall',
  'renderMCPResult',
  'InternalUrlRouter',
  'extractUriScheme',
  'getProjectDir',
  'logger',
  'AgentStorage',
]
const reset = () => configureMCP(Object.fromEntries(ALL.map((k) => [k, undefined])))
afterEach(reset)

let connection
beforeAll(async () => {
  connection = await connectToServer('hk', fixture([], { killGraceMs: 200 }))
})
afterAll(() => disconnectServer(connection))

const reflect = (inputSchema = { type: 'object' }) => ({ name: 'reflect', inputSchema })
const lastCallArgs = async () => {
  const calls = (await connection.transport.request('requests')).requests.filter((r) => r.method === 'tools/call')
  return calls.at(-1).params.arguments
}

describe('configureMCP', () => {
  it('is at the root too; merges; undefined resets; a wrong name or kind throws and sets nothing', () => {
    expect(rootConfigure).toBe(configureMCP)
    const logger = { warn() {} }
    const getProjectDir = () => '/x'
    configureMCP({ logger })
    configureMCP({ getProjectDir })
    expect(configuredHooks()).toEqual({ logger, getProjectDir })
    expect(() => configureMCP({ getProjectDir: undefined, nonsense: 1 })).toThrow(/unknown hook "nonsense"/)
    expect(() => configureMCP({ logger: undefined, ToolAbortError: 'not a class' })).toThrow(/hook "ToolAbortError" must be a function/)
    expect(() => configureMCP(null)).toThrow(TypeError)
    expect(configuredHooks()).toEqual({ logger, getProjectDir })
    configureMCP({ logger: undefined })
    expect(configuredHooks()).toEqual({ getProjectDir })
  })
})

describe('the tool objects with the agent objects injected', () => {
  it('an abort throws the injected ToolAbortError class (the agent tests instanceof)', async () => {
    class AgentAbort extends Error {
      name = 'ToolAbortError'
    }
    configureMCP({ ToolAbortError: AgentAbort })
    const tool = new MCPTool(connection, { name: 'slow', inputSchema: { type: 'object' } })
    const ac = new AbortController()
    const call = tool.execute('c1', { ms: 2000 }, undefined, undefined, ac.signal).then(
      () => 'resolved',
      (e) => e,
    )
    setTimeout(() => ac.abort(), 50)
    const error = await call
    expect(error).toBeInstanceOf(AgentAbort)
    expect(error).not.toBeInstanceOf(ToolAbortError)
    // Aborted before it starts: the same class.
    const early = await tool.execute('c2', {}, undefined, undefined, AbortSignal.abort()).catch((e) => e)
    expect(early).toBeInstanceOf(AgentAbort)
    // Without the hook: the package's own class.
    reset()
    const own = await tool.execute('c3', {}, undefined, undefined, AbortSignal.abort()).catch((e) => e)
    expect(own).toBeInstanceOf(ToolAbortError)
  })

  it('parameters from normalizeSchemaForMCP; the intent rule from schemaDeclaresIntentField', async () => {
    const seen = []
    configureMCP({
      normalizeSchemaForMCP: (schema) => {
        seen.push(schema)
        return { ...schema, normalized: true }
      },
      schemaDeclaresIntentField: (schema) => schema?.['x-intent'] === true,
    })
    const schema = { type: 'object', properties: { a: { type: 'string' } } }
    const tool = new MCPTool(connection, reflect(schema))
    expect(tool.parameters).toEqual({ ...schema, normalized: true })
    expect(seen).toEqual([schema])
    // The injected rule says the schema does not declare `i`: stripped (even though... it is not a property).
    await tool.execute('c', { i: 'why', a: 'x', result: { content: [] } })
    expect(await lastCallArgs()).toEqual({ a: 'x', result: { content: [] } })
    // The injected rule says it does: kept, though `properties` has no `i`.
    const declared = new MCPTool(connection, reflect({ ...schema, 'x-intent': true }))
    await declared.execute('c', { i: 'why', result: { content: [] } })
    expect(await lastCallArgs()).toEqual({ i: 'why', result: { content: [] } })
    // A hook that throws: the package's own rule (a schema without properties → its copy with {}).
    configureMCP({ normalizeSchemaForMCP: () => JSON.parse('{') })
    expect(new MCPTool(connection, reflect({ type: 'object' })).parameters).toEqual({ type: 'object', properties: {} })
  })

  it('renderCall and renderResult from the injected renderers, with the agent signature', () => {
    expect(new MCPTool(connection, reflect()).renderCall).toBeUndefined()
    const calls = []
    configureMCP({
      renderMCPCall: (args, theme, label) => calls.push(['call', args, theme, label]) && 'C',
      renderMCPResult: (result, options, theme, args) => calls.push(['result', result, options, theme, args]) && 'R',
    })
    const tool = new MCPTool(connection, reflect())
    expect(tool.renderCall(['not', 'an', 'object'], {}, 'T')).toBe('C')
    expect(tool.renderResult({ content: [] }, { expanded: true }, 'T', { a: 1 })).toBe('R')
    expect(calls).toEqual([
      ['call', {}, 'T', 'hk/reflect'],
      ['result', { content: [] }, { expanded: true }, 'T', { a: 1 }],
    ])
  })

  it('file-backed internal URLs in arguments become their paths through the injected router', async () => {
    const located = []
    const router = {
      normalize: (v) => v.trim(),
      canHandle: (u) => /^[a-z]+:\/\//.test(u),
      spec: (scheme) => (scheme === 'artifact' ? { backing: 'file' } : { backing: 'memory' }),
      locate: async (u, options) => {
        located.push([u, options.cwd])
        return `/tmp/artifacts/${u.slice('artifact://'.length)}`
      },
    }
    configureMCP({ InternalUrlRouter: { instance: () => router }, extractUriScheme: (u) => u.split('://')[0] })
    const tool = new MCPTool(connection, reflect({ type: 'object', properties: { files: {}, note: {}, mem: {} } }))
    const ctx = { sessionManager: { getCwd: () => '/work/session' } }
    const args = {
      files: [' artifact://a.txt', { deep: 'artifact://b/c.md' }],
      note: 'plain text',
      mem: 'memo://x',
      result: { content: [] },
    }
    await tool.execute('c', args, undefined, ctx)
    expect(await lastCallArgs()).toEqual({
      files: ['/tmp/artifacts/a.txt', { deep: '/tmp/artifacts/b/c.md' }],
      note: 'plain text',
      mem: 'memo://x',
      result: { content: [] },
    })
    expect(located).toEqual([
      ['artifact://a.txt', '/work/session'],
      ['artifact://b/c.md', '/work/session'],
    ])
    // The caller's object is not changed.
    expect(args.files[0]).toBe(' artifact://a.txt')
  })
})

describe('the project directory and the logger', () => {
  it('roots/list and a stdio server without cwd use the injected getProjectDir', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-hooks-')))
    configureMCP({ getProjectDir: () => dir })
    const c = await connectToServer('pd', fixture([], { killGraceMs: 200 }))
    try {
      expect((await c.transport.request('reverse', { method: 'roots/list' })).answer.result).toEqual({
        roots: [{ uri: pathToFileURL(dir).href, name: basename(dir) }],
      })
      expect((await c.transport.request('argv')).cwd).toBe(dir)
    } finally {
      await disconnectServer(c)
    }
    // A broken hook: the process's directory.
    configureMCP({ getProjectDir: () => JSON.parse('{') })
    const d = await connectToServer('pd2', fixture([], { killGraceMs: 200 }))
    try {
      expect((await d.transport.request('argv')).cwd).toBe(realpathSync(process.cwd()))
    } finally {
      await disconnectServer(d)
    }
  })

  it('the injected logger hears what the modules report; a logger that throws breaks nothing', () => {
    const lines = []
    configureMCP({ logger: { warn: (message, details) => lines.push([message, details]) } })
    const before = process.env.OMP_MCP_TIMEOUT_MS
    process.env.OMP_MCP_TIMEOUT_MS = 'soon'
    try {
      expect(resolveMCPTimeoutMs(1234)).toBe(1234)
      expect(lines).toEqual([['Ignoring invalid OMP_MCP_TIMEOUT_MS env value; expected a non-negative number', { value: 'soon' }]])
      configureMCP({
        logger: {
          warn() {
            throw new Error('broken logger')
          },
        },
      })
      expect(resolveMCPTimeoutMs(5)).toBe(5)
    } finally {
      if (before === undefined) delete process.env.OMP_MCP_TIMEOUT_MS
      else process.env.OMP_MCP_TIMEOUT_MS = before
    }
  })
})

describe('the agent storage', () => {
  it('the loader opens the injected AgentStorage for its tool cache when none is given; a failing open means no cache', async () => {
    const writes = []
    const storage = {
      getCache: () => null,
      setCache: (key, value) => writes.push([key, JSON.parse(value).tools?.length ?? null]),
    }
    let opened = 0
    configureMCP({
      AgentStorage: {
        open: async () => {
          opened++
          return storage
        },
      },
    })
    const loadConfigs = async () => ({ configs: { st: fixture([], { killGraceMs: 200 }) }, sources: {} })
    const first = await discoverAndLoadMCPTools(process.cwd(), { loadConfigs, startupTimeoutMs: 0 })
    try {
      expect(opened).toBe(1)
      expect(first.connectedServers).toEqual(['st'])
      expect(writes.length).toBe(1)
      expect(writes[0][0]).toMatch(/st/)
      expect(writes[0][1]).toBeGreaterThan(0)
    } finally {
      await first.manager.disconnectAll()
    }
    const lines = []
    configureMCP({
      logger: { warn: (message) => lines.push(message) },
      AgentStorage: {
        open: async () => {
          throw new Error('database is locked')
        },
      },
    })
    const second = await discoverAndLoadMCPTools(process.cwd(), { loadConfigs, startupTimeoutMs: 0 })
    try {
      expect(second.connectedServers).toEqual(['st'])
      expect(lines).toContain('MCP tool cache unavailable')
    } finally {
      await second.manager.disconnectAll()
    }
  })
})
