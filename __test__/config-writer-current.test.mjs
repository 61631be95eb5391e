// SPEC 11.4 "Config writer", 11.5 (17.1.0 "concurrent config writes lose nothing"): the root's
// config writer as the agent ships it (18.3.4 `config-writer.ts`): `$schema`, the disabled and
// force-enabled lists, `setMcpServerEnabled`, the injected `withFileLock` and
// `invalidateConfigCache`, and the per-file lock across real processes — Node and Node, Node and
// Bun, and (Bun only, with the agent's dependencies from `scripts/agent-setup.mjs`) the agent's
// own `@oh-my-pi/pi-utils` lock. In temporary folders. vitest (Node) and `bun test` (Bun).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import * as compat from 'mcp-native/compat-12.7/config-writer'
import { configureMCP } from 'mcp-native/configure'
import * as writer from 'mcp-native/config-writer'
import { MCP_CONFIG_SCHEMA_URL } from 'mcp-native/types'
import { ROOT, SCRIPT_NODE } from './helpers.mjs'

const {
  addMCPServer,
  getMCPServer,
  listMCPServers,
  readDisabledServers,
  readEnabledServers,
  readMCPConfigFile,
  removeMCPServer,
  setMcpServerEnabled,
  setServerDisabled,
  setServerForceEnabled,
  updateMCPServer,
  validateServerName,
  writeMCPConfigFile,
} = writer

const native = createRequire(import.meta.url)('../native/index.js')
const T = 10_000
const BUN = Boolean(process.versions.bun)
const FIXTURES = join(ROOT, '__test__', 'fixture', 'config-writer')
const HOOKS = ['withFileLock', 'invalidateConfigCache', 'validateServerConfig', 'logger']

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise) {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

const read = (f) => JSON.parse(readFileSync(f, 'utf8'))

let dir
/** @type {import('node:child_process').ChildProcess[]} */
let children = []
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-native-writer-current-'))
})
afterEach(() => {
  configureMCP(Object.fromEntries(HOOKS.map((k) => [k, undefined])))
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  children = []
  rmSync(dir, { recursive: true, force: true })
})

/**
 * A script run as a child process, its stdout read line by line: `take()` is the next line not yet
 * taken (failing when the child exits first or `ms` pass), `send(text)` writes a line to its stdin.
 */
function run(command, args) {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] })
  children.push(child)
  const lines = []
  let stderr = ''
  let exit = null
  const wake = new Set()
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line)
    for (const w of wake) w()
  })
  child.stderr.on('data', (d) => {
    stderr += d
  })
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exit = { code, signal }
      for (const w of wake) w()
      resolve(exit)
    })
  })
  let taken = 0
  const take = (ms = T) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`${args[0]}: no line in ${ms} ms (stderr: ${stderr})`)), ms)
      const finish = (error, line) => {
        clearTimeout(timer)
        wake.delete(check)
        if (error) reject(error)
        else resolve(line)
      }
      const check = () => {
        if (taken < lines.length) finish(null, lines[taken++])
        else if (exit) finish(new Error(`${args[0]} exited (${JSON.stringify(exit)}) after ${JSON.stringify(lines)}; stderr: ${stderr}`))
      }
      wake.add(check)
      check()
    })
  return { child, take, exited, send: (text) => child.stdin.write(`${text}\n`), stderr: () => stderr }
}

describe('mcp-native/config-writer at the root (agent 18.3.4)', () => {
  it(
    'writeMCPConfigFile: $schema first (a given one kept), exact text, private and atomic',
    async () => {
      const f = join(dir, 'a', 'b', 'mcp.json')
      await writeMCPConfigFile(f, { mcpServers: { x: { command: 'y' } } })
      expect(readFileSync(f, 'utf8')).toBe(
        `{\n  "$schema": "${MCP_CONFIG_SCHEMA_URL}",\n  "mcpServers": {\n    "x": {\n      "command": "y"\n    }\n  }\n}`,
      )
      expect(statSync(f).mode & 0o777).toBe(0o600)
      expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o700)
      expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['mcp.json'])
      // A $schema of the config's own stays, in first place; other keys are written as given.
      await writeMCPConfigFile(f, { disabledServers: ['q'], $schema: 'https://example.com/s.json' })
      expect(Object.entries(read(f))).toEqual([
        ['$schema', 'https://example.com/s.json'],
        ['disabledServers', ['q']],
      ])
      // Unvalidated both ways.
      expect(await readMCPConfigFile(f)).toEqual({ $schema: 'https://example.com/s.json', disabledServers: ['q'] })
      expect(await listMCPServers(f)).toEqual([])
    },
    T,
  )

  it(
    'readMCPConfigFile, getMCPServer, listMCPServers: an absent file is empty, a bad one a SyntaxError',
    async () => {
      const f = join(dir, 'none.json')
      expect(await readMCPConfigFile(f)).toEqual({ mcpServers: {} })
      expect(await getMCPServer(f, 'a')).toBeUndefined()
      expect(await listMCPServers(f)).toEqual([])
      expect(await readDisabledServers(f)).toEqual([])
      expect(await readEnabledServers(f)).toEqual([])
      const bad = join(dir, 'bad.json')
      writeFileSync(bad, '{bad')
      expect(await rejection(readMCPConfigFile(bad))).toBeInstanceOf(SyntaxError)
      expect(await rejection(addMCPServer(bad, 'a', { command: 'x' }))).toBeInstanceOf(SyntaxError)
      expect(await rejection(setServerDisabled(bad, 'a', true))).toBeInstanceOf(SyntaxError)
      expect(readFileSync(bad, 'utf8')).toBe('{bad')
    },
    T,
  )

  it(
    "validateServerName: 18.3.4's names (colons, words joined by single spaces) and messages",
    () => {
      const chars = 'Server name can only contain letters, numbers, dash, underscore, dot, colon, and single spaces'
      for (const ok of ['my.server-1_x', 'cloudflare:cloudflare-api', 'MaaS Slack', 'a b:c d', 'a'.repeat(100)]) {
        expect(validateServerName(ok)).toBeUndefined()
      }
      for (const bad of ['a/b', 'a  b', ' a', 'a ', 'a\tb', 'é']) expect(validateServerName(bad)).toBe(chars)
      expect(validateServerName('')).toBe('Server name cannot be empty')
      expect(validateServerName('a'.repeat(101))).toBe('Server name is too long (max 100 characters)')
    },
    T,
  )

  it(
    'add, update, remove: order kept, the messages, nothing written on a refusal',
    async () => {
      const f = join(dir, 'mcp.json')
      writeFileSync(f, '{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}},"other":1}')
      await updateMCPServer(f, 'a', { command: 'z' })
      await addMCPServer(f, 'with space:ns', { type: 'http', url: 'https://h/mcp' })
      expect(Object.keys(read(f))).toEqual(['$schema', 'mcpServers', 'other'])
      expect(await listMCPServers(f)).toEqual(['a', 'b', 'with space:ns'])
      expect(await getMCPServer(f, 'a')).toEqual({ command: 'z' })
      await updateMCPServer(f, 'c', { command: 'w' })
      expect(await listMCPServers(f)).toEqual(['a', 'b', 'with space:ns', 'c'])

      const before = readFileSync(f, 'utf8')
      expect((await rejection(addMCPServer(f, 'a', { command: 'q' }))).message).toBe(`Server "a" already exists in ${f}`)
      expect((await rejection(removeMCPServer(f, 'nope'))).message).toBe(`Server "nope" not found in ${f}`)
      expect((await rejection(addMCPServer(f, 'x', { command: 'npx', url: 'https://h' }))).message).toBe(
        'Invalid server config: Server "x": both "command" and "url" are set - server should be either stdio (command) OR http/sse (url), not both',
      )
      expect((await rejection(updateMCPServer(f, 'x', { type: 'sse' }))).message).toBe(
        'Invalid server config: Server "x": sse server requires "url" field',
      )
      // The name is checked before the config.
      expect((await rejection(addMCPServer(f, 'a/b', { type: 'ws' }))).message).toBe(
        'Server name can only contain letters, numbers, dash, underscore, dot, colon, and single spaces',
      )
      expect((await rejection(updateMCPServer(f, '', {}))).message).toBe('Server name cannot be empty')
      expect(readFileSync(f, 'utf8')).toBe(before)

      await removeMCPServer(f, 'b')
      expect(await listMCPServers(f)).toEqual(['a', 'with space:ns', 'c'])
      // No temporary file is left (a lock file is, on macOS and Windows).
      expect(readdirSync(dir).filter((n) => !n.endsWith('.lock'))).toEqual(['mcp.json'])

      // As 18.3.4: the file's directory is made before the lock, even when the edit then fails.
      const missing = join(dir, 'sub', 'mcp.json')
      expect((await rejection(removeMCPServer(missing, 'x'))).message).toBe(`Server "x" not found in ${missing}`)
      expect(existsSync(join(dir, 'sub'))).toBe(true)
      expect(existsSync(missing)).toBe(false)
    },
    T,
  )

  it(
    'disabledServers and enabledServers: kept sorted without duplicates, dropped when empty',
    async () => {
      const f = join(dir, 'mcp.json')
      writeFileSync(f, '{"mcpServers":{"a":{"command":"x"}},"disabledServers":null}')
      expect(await readDisabledServers(f)).toEqual([])
      await setServerDisabled(f, 'b', true)
      await setServerDisabled(f, 'a', true)
      await setServerDisabled(f, 'a', true)
      expect(await readDisabledServers(f)).toEqual(['a', 'b'])
      expect(Object.keys(read(f))).toEqual(['$schema', 'mcpServers', 'disabledServers'])
      await setServerForceEnabled(f, 'z', true)
      await setServerForceEnabled(f, 'm', true)
      expect(await readEnabledServers(f)).toEqual(['m', 'z'])
      await setServerDisabled(f, 'a', false)
      await setServerDisabled(f, 'b', false)
      await setServerForceEnabled(f, 'z', false)
      await setServerForceEnabled(f, 'm', false)
      expect(read(f)).toEqual({ $schema: MCP_CONFIG_SCHEMA_URL, mcpServers: { a: { command: 'x' } } })
      // Taking out a name that is not there still writes the file (with $schema), as 18.3.4 does.
      const g = join(dir, 'new', 'mcp.json')
      await setServerDisabled(g, 'x', false)
      expect(read(g)).toEqual({ $schema: MCP_CONFIG_SCHEMA_URL, mcpServers: {} })
    },
    T,
  )

  it(
    'setMcpServerEnabled: writes `enabled` on the entry of the first of sourcePath, projectPath, userPath',
    async () => {
      const userPath = join(dir, 'user', 'mcp.json')
      const projectPath = join(dir, 'project', '.omp', 'mcp.json')
      const sourcePath = join(dir, 'project', '.mcp.json')
      await writeMCPConfigFile(userPath, { mcpServers: { s: { command: 'u' }, u: { command: 'u' } }, enabledServers: ['s'] })
      await writeMCPConfigFile(projectPath, { mcpServers: { s: { command: 'p' }, p: { command: 'p' } } })
      await writeMCPConfigFile(sourcePath, { mcpServers: { s: { command: 's' } } })

      // In all three: the source's entry; disabling also drops the user's force.
      await setMcpServerEnabled({ userPath, projectPath, sourcePath, name: 's', enabled: false })
      expect((await getMCPServer(sourcePath, 's')).enabled).toBe(false)
      expect(await getMCPServer(projectPath, 's')).toEqual({ command: 'p' })
      expect(read(userPath).enabledServers).toBeUndefined()
      expect(await readDisabledServers(userPath)).toEqual([])

      // No sourcePath: the project's entry.
      await setMcpServerEnabled({ userPath, projectPath, name: 's', enabled: false })
      expect(await getMCPServer(projectPath, 's')).toEqual({ command: 'p', enabled: false })
      // Only in the user file: the user's entry.
      await setMcpServerEnabled({ userPath, projectPath, name: 'u', enabled: false })
      expect(await getMCPServer(userPath, 'u')).toEqual({ command: 'u', enabled: false })
      expect(await readDisabledServers(userPath)).toEqual([])

      // Enabling an entry drops a stale denylist entry and a force the entry makes redundant.
      await setServerDisabled(userPath, 'p', true)
      await setServerForceEnabled(userPath, 'p', true)
      await setMcpServerEnabled({ userPath, projectPath, name: 'p', enabled: true })
      expect(await getMCPServer(projectPath, 'p')).toEqual({ command: 'p', enabled: true })
      expect(await readDisabledServers(userPath)).toEqual([])
      expect(await readEnabledServers(userPath)).toEqual([])

      // projectPath and userPath may be one file.
      await setMcpServerEnabled({ userPath, projectPath: userPath, name: 'u', enabled: true })
      expect(await getMCPServer(userPath, 'u')).toEqual({ command: 'u', enabled: true })
    },
    T,
  )

  it(
    'setMcpServerEnabled: a server in no writable file goes through the user lists',
    async () => {
      const userPath = join(dir, 'user', 'mcp.json')
      const projectPath = join(dir, 'project', 'mcp.json')
      // Disable: denylisted (the user file is made).
      await setMcpServerEnabled({ userPath, projectPath, name: 'elsewhere', enabled: false })
      expect(read(userPath)).toEqual({ $schema: MCP_CONFIG_SCHEMA_URL, mcpServers: {}, disabledServers: ['elsewhere'] })
      expect(existsSync(projectPath)).toBe(false)
      // Enable: off the denylist, forced on.
      await setMcpServerEnabled({ userPath, projectPath, name: 'elsewhere', enabled: true })
      expect(await readDisabledServers(userPath)).toEqual([])
      expect(await readEnabledServers(userPath)).toEqual(['elsewhere'])
      // Enable again: nothing changes.
      await setMcpServerEnabled({ userPath, projectPath, name: 'elsewhere', enabled: true })
      expect(await readEnabledServers(userPath)).toEqual(['elsewhere'])
      // Disable: the force goes, the denylist entry comes.
      await setMcpServerEnabled({ userPath, projectPath, name: 'elsewhere', enabled: false })
      expect(read(userPath)).toEqual({ $schema: MCP_CONFIG_SCHEMA_URL, mcpServers: {}, disabledServers: ['elsewhere'] })
      // An entry that fails validation is refused like an update.
      await writeMCPConfigFile(projectPath, { mcpServers: { broken: { type: 'http' } } })
      expect((await rejection(setMcpServerEnabled({ userPath, projectPath, name: 'broken', enabled: true }))).message).toBe(
        'Invalid server config: Server "broken": http server requires "url" field',
      )
    },
    T,
  )

  it(
    'the 12.7 profile keeps its own objects where 12.7 and 18.3.4 differ, and shares the others',
    async () => {
      for (const name of ['readMCPConfigFile', 'getMCPServer', 'listMCPServers', 'getMCPConfigPath']) {
        expect(compat[name]).toBe(writer[name])
      }
      for (const name of ['writeMCPConfigFile', 'validateServerName', 'addMCPServer', 'updateMCPServer', 'removeMCPServer']) {
        expect(typeof compat[name]).toBe('function')
        expect(compat[name]).not.toBe(writer[name])
      }
      for (const name of [
        'readDisabledServers',
        'setServerDisabled',
        'readEnabledServers',
        'setServerForceEnabled',
        'setMcpServerEnabled',
      ]) {
        expect(compat[name]).toBeUndefined()
      }
      expect(compat.validateServerName('a:b')).toBe('Server name can only contain letters, numbers, dash, underscore, and dot')
      const f = join(dir, 'mcp.json')
      await compat.addMCPServer(f, 'a', { command: 'x' })
      expect(read(f).$schema).toBeUndefined()
      await addMCPServer(f, 'b', { command: 'x' })
      expect(Object.keys(read(f))).toEqual(['$schema', 'mcpServers'])
    },
    T,
  )
})

describe("the agent's hooks (configureMCP)", () => {
  it(
    'an injected withFileLock wraps every read-modify-write, with the path as given; our own lock is then not taken',
    async () => {
      const f = join(dir, 'mcp.json')
      const calls = []
      configureMCP({
        withFileLock: async (path, fn, ...rest) => {
          calls.push([path, rest.length])
          return await fn()
        },
      })
      // Our own lock held meanwhile: with a lock injected, nothing waits for it.
      const own = native.tryFileLock(`${resolve(f)}.lock`)
      expect(own).not.toBeNull()
      try {
        await addMCPServer(f, 'a', { command: 'x' })
        await updateMCPServer(f, 'a', { command: 'y' })
        await setServerDisabled(f, 'a', true)
        await setServerForceEnabled(f, 'a', true)
        await removeMCPServer(f, 'a')
        await writeMCPConfigFile(f, { mcpServers: {} })
        await readMCPConfigFile(f)
      } finally {
        own.release()
      }
      expect(calls).toEqual(Array.from({ length: 5 }, () => [f, 0]))
      // The injected lock's failure is the edit's.
      configureMCP({
        withFileLock: async () => {
          throw new Error('Failed to acquire lock for x after 50 attempts')
        },
      })
      expect((await rejection(addMCPServer(f, 'b', { command: 'x' }))).message).toBe('Failed to acquire lock for x after 50 attempts')
      expect(await listMCPServers(f)).toEqual([])
    },
    T,
  )

  it(
    'invalidateConfigCache: told the path after each write, never on a refusal; a throwing or rejecting hook breaks nothing',
    async () => {
      const f = join(dir, 'mcp.json')
      const seen = []
      configureMCP({ invalidateConfigCache: (path) => seen.push(path) })
      await addMCPServer(f, 'a', { command: 'x' })
      await rejection(addMCPServer(f, 'a', { command: 'x' }))
      await writeMCPConfigFile(f, read(f))
      await setServerDisabled(f, 'a', true)
      expect(seen).toEqual([f, f, f])

      const warned = []
      configureMCP({
        invalidateConfigCache: () => {
          throw new Error('cache is broken')
        },
        logger: { warn: (message, details) => warned.push([message, details]) },
      })
      await addMCPServer(f, 'b', { command: 'x' })
      configureMCP({ invalidateConfigCache: async () => Promise.reject(new Error('async cache is broken')) })
      await addMCPServer(f, 'c', { command: 'x' })
      await new Promise((r) => setImmediate(r))
      expect(await listMCPServers(f)).toEqual(['a', 'b', 'c'])
      expect(warned.map(([message, details]) => [message, details.path, details.error])).toEqual([
        ['invalidateConfigCache failed after an MCP config write', f, 'Error: cache is broken'],
        ['invalidateConfigCache failed after an MCP config write', f, 'Error: async cache is broken'],
      ])
    },
    T,
  )

  it(
    "an injected validateServerConfig (the agent's config.ts) checks the configs of add and update",
    async () => {
      const f = join(dir, 'mcp.json')
      configureMCP({ validateServerConfig: (name, config) => (config.command === 'bad' ? [`Server "${name}": no`, 'twice'] : []) })
      expect((await rejection(addMCPServer(f, 'a', { command: 'bad' }))).message).toBe('Invalid server config: Server "a": no; twice')
      await addMCPServer(f, 'a', { url: 'accepted by the hook', command: 'x' })
      expect(await getMCPServer(f, 'a')).toEqual({ url: 'accepted by the hook', command: 'x' })
    },
    T,
  )
})

/** The pinned oldest Bun of the test matrix (scripts/runtimes.mjs), when it is installed. */
async function bunBinary() {
  if (BUN) return process.execPath
  const { RUNTIMES, CACHE, isMusl } = await import('../scripts/runtimes.mjs')
  const version = RUNTIMES['bun-oldest'].split('@')[1]
  const musl = process.platform === 'linux' && isMusl() ? '-musl' : ''
  const bin = join(
    CACHE,
    `bun-${version}-${process.platform}-${process.arch}${musl}`,
    'bin',
    process.platform === 'win32' ? 'bun.exe' : 'bun',
  )
  return existsSync(bin) ? bin : null
}
const BUN_BINARY = await bunBinary()

/** Two writer processes add `count` servers each to one file, started together. */
async function addTogether(runtimes, count) {
  const f = join(dir, 'shared', 'mcp.json')
  const writers = runtimes.map((runtime, i) => run(runtime, [join(FIXTURES, 'add-many.mjs'), f, `w${i}-`, String(count)]))
  for (const w of writers) expect(await w.take()).toBe('ready')
  for (const w of writers) w.send('go')
  for (const w of writers) expect(await w.take(30_000)).toBe('done')
  for (const w of writers) expect((await w.exited).code).toBe(0)
  const names = await listMCPServers(f)
  const expected = runtimes.flatMap((_, i) => Array.from({ length: count }, (_, n) => `w${i}-${n}`))
  expect(names.sort()).toEqual(expected.sort())
  expect(readdirSync(join(dir, 'shared')).filter((n) => n.endsWith('.tmp'))).toEqual([])
}

describe('the per-file lock (agent 17.1.0)', () => {
  it(
    'concurrent config writes lose nothing: two Node processes add 40 servers each to one file at once',
    () => addTogether([SCRIPT_NODE, SCRIPT_NODE], 40),
    60_000,
  )

  it.skipIf(!BUN_BINARY)(
    'concurrent config writes lose nothing: a Node process and a Bun process add 40 servers each at once',
    () => addTogether([SCRIPT_NODE, BUN_BINARY], 40),
    60_000,
  )

  it(
    'edits of one file in one process queue before the lock: 60 at once all land',
    async () => {
      const f = join(dir, 'mcp.json')
      const names = Array.from({ length: 60 }, (_, i) => `s${i}`)
      await Promise.all(names.map((n) => addMCPServer(f, n, { command: n })))
      expect(await listMCPServers(f)).toEqual(names)
      await Promise.all([removeMCPServer(f, 's0'), setServerDisabled(f, 's1', true), setServerForceEnabled(f, 's2', true)])
      expect((await listMCPServers(f)).length).toBe(59)
      expect(read(f).disabledServers).toEqual(['s1'])
      expect(read(f).enabledServers).toEqual(['s2'])
    },
    T,
  )

  it("a lock held elsewhere: the writer tries 50 times 100 ms apart, then fails with the agent's message", async () => {
    const f = join(dir, 'held', 'mcp.json')
    mkdirSync(join(dir, 'held'))
    const held = native.tryFileLock(`${resolve(f)}.lock`)
    expect(held).not.toBeNull()
    // A second attempt at a held lock is refused at once (in this process as in another).
    expect(native.tryFileLock(`${resolve(f)}.lock`)).toBeNull()
    const started = Date.now()
    try {
      const error = await rejection(addMCPServer(f, 'a', { command: 'x' }))
      expect(error.message).toBe(`Failed to acquire lock for ${f} after 50 attempts`)
    } finally {
      held.release()
    }
    const waited = Date.now() - started
    expect(waited).toBeGreaterThanOrEqual(49 * 100 - 50)
    expect(waited).toBeLessThan(15_000)
    expect(existsSync(f)).toBe(false)
    await addMCPServer(f, 'a', { command: 'x' })
    expect(await listMCPServers(f)).toEqual(['a'])
  }, 20_000)
})

// The agent's dependencies as `scripts/agent-setup.mjs` installs them (SPEC 11.7).
const AGENT_DEPS = join(
  process.env.MCP_NATIVE_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mcp-native'),
  'agent',
  '18.3.4',
  'deps',
)
const PI_FILE_LOCK = join(AGENT_DEPS, 'node_modules', '@oh-my-pi', 'pi-utils', 'src', 'file-lock.ts')
/** Why the agent's lock cannot be used here, or null when it can (Bun, the deps installed, pi-natives loading). */
async function agentLockMissing() {
  if (!BUN) return 'Bun only: the agent imports its lock as TypeScript and calls Bun.sleep'
  if (!existsSync(PI_FILE_LOCK)) return `no ${PI_FILE_LOCK}: run node scripts/agent-setup.mjs`
  try {
    await import(PI_FILE_LOCK)
    return null
  } catch (error) {
    return `the agent's lock does not load: ${String(error?.message).split('\n')[0]}`
  }
}
const AGENT_LOCK_MISSING = await agentLockMissing()
if (AGENT_LOCK_MISSING && BUN)
  console.warn(`config-writer-current: the tests against the agent's own lock are skipped: ${AGENT_LOCK_MISSING}`)

describe("against the agent's own lock (@oh-my-pi/pi-utils withFileLock, nothing injected)", () => {
  it.skipIf(AGENT_LOCK_MISSING !== null)(
    "a Bun process holding the agent's withFileLock makes the package's writer wait; nothing is lost",
    async () => {
      const f = join(dir, 'mcp.json')
      await writeMCPConfigFile(f, { mcpServers: { first: { command: 'x' } } })
      // Held throughout: the writer gives up after its 50 attempts.
      const holder = run(process.execPath, [join(FIXTURES, 'agent-lock.mjs'), PI_FILE_LOCK, f, 'hold'])
      expect(await holder.take()).toBe('held')
      expect(native.tryFileLock(`${resolve(f)}.lock`)).toBeNull()
      expect((await rejection(addMCPServer(f, 'never', { command: 'x' }))).message).toBe(
        `Failed to acquire lock for ${f} after 50 attempts`,
      )
      // Released while the writer waits: the agent writes back what it read when it took the lock,
      // plus its server; the writer's edit comes after it, so both stay.
      const pending = addMCPServer(f, 'package', { command: 'x' })
      holder.send('go')
      expect(await holder.take()).toBe('released')
      await pending
      expect(await listMCPServers(f)).toEqual(['first', 'agent', 'package'])
    },
    30_000,
  )

  it.skipIf(AGENT_LOCK_MISSING !== null)(
    "the package's own lock held: the agent's acquireFileLock is refused until it is released",
    async () => {
      const f = join(dir, 'mcp.json')
      const agent = run(process.execPath, [join(FIXTURES, 'agent-lock.mjs'), PI_FILE_LOCK, f, 'try'])
      expect(await agent.take()).toBe('ready')
      const held = native.tryFileLock(`${resolve(f)}.lock`)
      try {
        agent.send('try')
        expect(await agent.take()).toBe(`refused Failed to acquire lock for ${f} after 1 attempts`)
      } finally {
        held.release()
      }
      agent.send('try')
      expect(await agent.take()).toBe('acquired')
      agent.child.stdin.end()
      expect((await agent.exited).code).toBe(0)
    },
    T,
  )
})
