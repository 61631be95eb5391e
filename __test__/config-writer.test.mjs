// SPEC 8.5, 8.10 (C1–C5), 8.11: the config writer and getMCPConfigPath, in temporary folders.
// vitest (Node) and `bun test` (Bun).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import {
  addMCPServer,
  getMCPConfigPath,
  getMCPServer,
  listMCPServers,
  readMCPConfigFile,
  removeMCPServer,
  updateMCPServer,
  validateServerName,
  writeMCPConfigFile,
} from 'mcp-native/compat-12.7/config-writer'

const T = 10000

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise) {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

let dir
const savedEnv = {}
const ENV_KEYS = ['HOME', 'PI_CODING_AGENT_DIR', 'PI_CONFIG_DIR']
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-native-writer-'))
  for (const k of ENV_KEYS) savedEnv[k] = process.env[k]
})
afterEach(() => {
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k]
    else process.env[k] = savedEnv[k]
  }
  rmSync(dir, { recursive: true, force: true })
})

describe('config writer (SPEC 8.10)', () => {
  it(
    'C1: add to a missing file creates parents and writes the exact text; adding again throws',
    async () => {
      const f = join(dir, 'a', 'b', 'mcp.json')
      await addMCPServer(f, 'github', { type: 'http', url: 'https://api.example.com/mcp' })
      expect(readFileSync(f, 'utf8')).toBe(
        '{\n  "mcpServers": {\n    "github": {\n      "type": "http",\n      "url": "https://api.example.com/mcp"\n    }\n  }\n}',
      )
      expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['mcp.json'])
      expect(statSync(f).mode & 0o777).toBe(0o600)
      expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o700)
      expect(statSync(join(dir, 'a', 'b')).mode & 0o777).toBe(0o700)

      const error = await rejection(addMCPServer(f, 'github', { type: 'http', url: 'https://other/mcp' }))
      expect(error).toBeInstanceOf(Error)
      expect(error.message).toBe(`Server "github" already exists in ${f}`)
      expect(JSON.parse(readFileSync(f, 'utf8')).mcpServers.github.url).toBe('https://api.example.com/mcp')
    },
    T,
  )

  it(
    'C2: update in place, then add last; other top-level keys stay where they were',
    async () => {
      const f = join(dir, 'mcp.json')
      writeFileSync(f, '{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}},"other":1}')
      await updateMCPServer(f, 'a', { command: 'z', args: ['1'] })
      await addMCPServer(f, 'c', { type: 'sse', url: 'https://h/sse' })
      const written = JSON.parse(readFileSync(f, 'utf8'))
      expect(Object.keys(written)).toEqual(['mcpServers', 'other'])
      expect(Object.keys(written.mcpServers)).toEqual(['a', 'b', 'c'])
      expect(written.mcpServers.a).toEqual({ command: 'z', args: ['1'] })
      expect(written.other).toBe(1)
      // Update of a missing server appends it.
      await updateMCPServer(f, 'd', { command: 'w' })
      expect(await listMCPServers(f)).toEqual(['a', 'b', 'c', 'd'])
    },
    T,
  )

  it(
    'C3: validateServerName',
    () => {
      expect(validateServerName('my server')).toBe('Server name can only contain letters, numbers, dash, underscore, and dot')
      expect(validateServerName('my.server-1_x')).toBeUndefined()
      expect(validateServerName('a'.repeat(101))).toBe('Server name is too long (max 100 characters)')
      expect(validateServerName('a'.repeat(100))).toBeUndefined()
      expect(validateServerName('')).toBe('Server name cannot be empty')
      expect(validateServerName('a:b')).toBe('Server name can only contain letters, numbers, dash, underscore, and dot')
      expect(validateServerName('a/b')).toBe('Server name can only contain letters, numbers, dash, underscore, and dot')
    },
    T,
  )

  it(
    'C4: an invalid config is refused with the validation messages; the name is checked first',
    async () => {
      const f = join(dir, 'mcp.json')
      const error = await rejection(addMCPServer(f, 'x', { command: 'npx', url: 'https://h' }))
      expect(error.message).toBe(
        'Invalid server config: Server "x": both "command" and "url" are set - server should be either stdio (command) OR http/sse (url), not both',
      )
      expect((await rejection(updateMCPServer(f, 'x', { type: 'http' }))).message).toBe(
        'Invalid server config: Server "x": http server requires "url" field',
      )
      expect((await rejection(addMCPServer(f, 'x', { type: 'ws' }))).message).toBe(
        'Invalid server config: Server "x": unknown server type "ws"',
      )
      expect((await rejection(addMCPServer(f, 'x', {}))).message).toBe(
        'Invalid server config: Server "x": stdio server requires "command" field',
      )
      expect((await rejection(addMCPServer(f, 'bad name', { type: 'ws' }))).message).toBe(
        'Server name can only contain letters, numbers, dash, underscore, and dot',
      )
      expect((await rejection(updateMCPServer(f, '', { command: 'x' }))).message).toBe('Server name cannot be empty')
      expect(existsSync(f)).toBe(false)
    },
    T,
  )

  it(
    'C5: remove from a missing file throws and creates nothing; list is []; a bad file is a SyntaxError',
    async () => {
      const f = join(dir, 'sub', 'mcp.json')
      const error = await rejection(removeMCPServer(f, 'x'))
      expect(error.message).toBe(`Server "x" not found in ${f}`)
      expect(existsSync(f)).toBe(false)
      expect(existsSync(join(dir, 'sub'))).toBe(false)
      expect(await listMCPServers(f)).toEqual([])

      const bad = join(dir, 'bad.json')
      writeFileSync(bad, '{bad')
      expect(await rejection(readMCPConfigFile(bad))).toBeInstanceOf(SyntaxError)
      expect(await rejection(listMCPServers(bad))).toBeInstanceOf(SyntaxError)
      expect(await rejection(addMCPServer(bad, 'a', { command: 'x' }))).toBeInstanceOf(SyntaxError)
      expect(readFileSync(bad, 'utf8')).toBe('{bad')
    },
    T,
  )

  it(
    'read, get, remove and write',
    async () => {
      const f = join(dir, 'mcp.json')
      expect(await readMCPConfigFile(f)).toEqual({ mcpServers: {} })
      expect(await getMCPServer(f, 'a')).toBeUndefined()
      await addMCPServer(f, 'a', { command: 'x' })
      await addMCPServer(f, 'b', { command: 'y', env: { K: 'v' } })
      expect(await getMCPServer(f, 'b')).toEqual({ command: 'y', env: { K: 'v' } })
      await removeMCPServer(f, 'a')
      expect(await listMCPServers(f)).toEqual(['b'])
      expect((await rejection(removeMCPServer(f, 'a'))).message).toBe(`Server "a" not found in ${f}`)

      // Unvalidated both ways; no $schema is added; no trailing newline.
      await writeMCPConfigFile(f, { disabledServers: ['q'], anything: { n: 1 } })
      expect(readFileSync(f, 'utf8')).toBe('{\n  "disabledServers": [\n    "q"\n  ],\n  "anything": {\n    "n": 1\n  }\n}')
      expect(await readMCPConfigFile(f)).toEqual({ disabledServers: ['q'], anything: { n: 1 } })
      expect(await listMCPServers(f)).toEqual([])
      // A file without mcpServers gets one on add.
      await addMCPServer(f, 'c', { command: 'z' })
      expect(Object.keys(JSON.parse(readFileSync(f, 'utf8')))).toEqual(['disabledServers', 'anything', 'mcpServers'])
      expect(readdirSync(dir)).toEqual(['mcp.json'])
    },
    T,
  )

  it(
    'concurrent edits of one file in one process all land',
    async () => {
      const f = join(dir, 'mcp.json')
      const names = Array.from({ length: 12 }, (_, i) => `s${i}`)
      await Promise.all(names.map((n) => addMCPServer(f, n, { command: n })))
      expect(await listMCPServers(f)).toEqual(names)
      await Promise.all([removeMCPServer(f, 's0'), updateMCPServer(f, 's1', { command: 'new' }), removeMCPServer(f, 's11')])
      expect(await listMCPServers(f)).toEqual(names.slice(1, 11))
      expect(await getMCPServer(f, 's1')).toEqual({ command: 'new' })
    },
    T,
  )

  it(
    'other read failures reject like Node fs errors',
    async () => {
      const error = await rejection(readMCPConfigFile(dir))
      expect(error).toBeInstanceOf(Error)
      expect(error.code).toBe('EISDIR')
      expect(error.syscall).toBe('read')
      expect(error.path).toBe(dir)
      // A parent that is a file: the write fails at mkdir, and nothing is left behind.
      writeFileSync(join(dir, 'plain'), 'x')
      const mkdir = await rejection(addMCPServer(join(dir, 'plain', 'mcp.json'), 'a', { command: 'x' }))
      expect(mkdir.code).toMatch(/^(EEXIST|ENOTDIR)$/)
      const badPath = await rejection(readMCPConfigFile(42))
      expect(badPath.code).toBe('ERR_INVALID_ARG_TYPE')
    },
    T,
  )

  it(
    'relative paths are taken from the current directory, and a file: URL works',
    async () => {
      const f = join(dir, 'url.json')
      await addMCPServer(new URL(`file://${f}`), 'a', { command: 'x' })
      expect(await listMCPServers(f)).toEqual(['a'])
      const rel = join('.', 'relative-writer-test', String(process.pid), 'mcp.json')
      try {
        await addMCPServer(rel, 'r', { command: 'x' })
        expect(JSON.parse(readFileSync(resolve(rel), 'utf8')).mcpServers.r).toEqual({ command: 'x' })
      } finally {
        rmSync(resolve('relative-writer-test'), { recursive: true, force: true })
      }
    },
    T,
  )
})

describe('getMCPConfigPath', () => {
  it(
    'user: $PI_CODING_AGENT_DIR, else ~/<$PI_CONFIG_DIR or .omp>/agent; project: <cwd>/.omp',
    async () => {
      process.env.PI_CODING_AGENT_DIR = join(dir, 'agent')
      expect(getMCPConfigPath('user')).toBe(join(dir, 'agent', 'mcp.json'))
      process.env.PI_CODING_AGENT_DIR = 'rel-agent'
      expect(getMCPConfigPath('user')).toBe(join(process.cwd(), 'rel-agent', 'mcp.json'))

      delete process.env.PI_CODING_AGENT_DIR
      delete process.env.PI_CONFIG_DIR
      process.env.HOME = join(dir, 'home')
      expect(getMCPConfigPath('user')).toBe(join(dir, 'home', '.omp', 'agent', 'mcp.json'))
      process.env.PI_CONFIG_DIR = '.pi'
      expect(getMCPConfigPath('user', '/ignored')).toBe(join(dir, 'home', '.pi', 'agent', 'mcp.json'))
      process.env.PI_CONFIG_DIR = ''
      expect(getMCPConfigPath('user')).toBe(join(dir, 'home', '.omp', 'agent', 'mcp.json'))

      expect(getMCPConfigPath('project', join(dir, 'proj'))).toBe(join(dir, 'proj', '.omp', 'mcp.json'))
      expect(getMCPConfigPath('project')).toBe(join(process.cwd(), '.omp', 'mcp.json'))

      // The writer uses it as the agent does.
      mkdirSync(join(dir, 'home'))
      await addMCPServer(getMCPConfigPath('user'), 'mine', { command: 'x' })
      expect(await listMCPServers(join(dir, 'home', '.omp', 'agent', 'mcp.json'))).toEqual(['mine'])
    },
    T,
  )
})
