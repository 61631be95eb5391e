// Shared helpers for the JS tests (vitest under Node, `bun test` under Bun).
import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
/** Where napi-rs writes the generated loader (index.js, index.d.ts) and the locally built `.node`, side by side. */
export const NATIVE_DIR = join(ROOT, 'native')
/** The 12.7 profile's entry (`mcp-native/compat-12.7`, SPEC 11.3), for scripts that require the package by path. */
export const COMPAT = join(ROOT, 'lib', 'entries', 'compat-12.7.js')
export const FIXTURE = join(ROOT, '__test__', 'fixture', 'server.mjs')
/** The Node that runs a script importing the package: the Node under test, `node` from PATH under Bun. */
export const SCRIPT_NODE = process.versions.bun ? 'node' : process.execPath
/**
 * The Node that runs the fixture servers: SCRIPT_NODE, or MCP_NATIVE_FIXTURE_NODE — the machine's
 * own Node when the runtime under test is emulated (scripts/target-tests.mjs), so a server's speed
 * is not the emulator's.
 */
export const NODE = process.env.MCP_NATIVE_FIXTURE_NODE || SCRIPT_NODE
/** The JS thread reads the server's stdout (lib/core.js): not with MCP_NATIVE_RUST_READER=1, never on Windows. */
export const JS_READER = process.platform !== 'win32' && process.env.MCP_NATIVE_RUST_READER !== '1'

/** A stdio config for the fixture server with extra flags and config fields. */
export function fixture(flags = [], extra = {}) {
  return { command: NODE, args: [FIXTURE, ...flags], ...extra }
}

/** True while `pid` exists and is not a zombie (Windows: while it can be signalled, i.e. opened). */
export function alive(pid) {
  if (process.platform === 'win32') {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  return procAlive(pid)
}

/** Linux's view: `/proc/<pid>/stat` exists and is not a zombie's. */
function procAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/**
 * Polls `predicate` every 10 ms until it holds, and returns its value; throws when `ms` pass
 * without it (a wait that timed out is a failure, never a silent fall-through to the next line).
 */
export async function waitFor(predicate, ms = 5000) {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`waitFor: not within ${ms} ms: ${predicate.toString().slice(0, 200)}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Settles to `{ value }` or `{ error }`, never throws. */
export async function settle(promise) {
  try {
    return { value: await promise }
  } catch (error) {
    return { error }
  }
}

/**
 * Process ids whose command line contains `text` (for "nothing is left running" checks), from
 * Linux's /proc — under wine too, whose Windows processes are Linux processes (then the ids are
 * Linux's, for counting only). Windows itself has no such table for a test to read.
 */
export function processesWith(text) {
  const found = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || (process.platform !== 'win32' && Number(entry) === process.pid)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (cmdline.includes(text) && procAlive(Number(entry))) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

let markerSeq = 0
/** A unique `--marker=` flag for the fixture server. */
export function marker() {
  return `--marker=mcp-native-${process.pid}-${Date.now()}-${++markerSeq}`
}

/** The entry point of an `@modelcontextprotocol/*` devDependency (`dist/index.js`). */
export function mcpPackage(name) {
  return join(ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js')
}

/** Starts the project's HTTP fixture server on 127.0.0.1:0: `{ child, base }`. */
export async function startHttpFixture() {
  // stderr piped and passed on, not inherited: Node for Windows under wine cannot open an inherited
  // handle of Bun 1.4 as its stderr (EBADF at start).
  const child = spawn(NODE, [join(ROOT, '__test__', 'fixture', 'http-server.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] })
  child.stderr.on('data', (chunk) => process.stderr.write(chunk))
  const { port } = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(JSON.parse(String(d)))))
  return { child, base: `http://127.0.0.1:${port}` }
}

/**
 * Starts server-everything in an HTTP mode (`streamableHttp` or `sse`) on a free loopback port
 * and waits until it answers: `{ port, child }`. (It listens on all interfaces; we only use
 * 127.0.0.1.)
 */
export async function startEverything(mode) {
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
  const child = spawn(NODE, [mcpPackage('server-everything'), mode], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' })
  await waitFor(async () => {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { method: 'HEAD' })
      return true
    } catch {
      return false
    }
  }, 15000)
  return { port, child }
}

/** The kinds of the events from Rust, as the addon defines them (src/sink.rs `EventKind`). */
export const EventKind = createRequire(import.meta.url)('../native/index.js').EventKind

/**
 * The kinds of the events a transport (or a client's face) handles from now on, in order
 * (lib/core.js `_onEvent`): {@link EventKind}s, e.g. `Result` an answer parsed with its batch,
 * `RawAnswer` a large answer (src/sink.rs).
 * @param {any} transport
 * @returns {number[]} filled as events come
 */
export function eventKinds(transport) {
  /** @type {number[]} */
  const kinds = []
  const onEvent = transport._onEvent.bind(transport)
  transport._onEvent = (/** @type {any[]} */ ev) => {
    kinds.push(ev[0])
    onEvent(ev)
  }
  return kinds
}

/**
 * An answer of 64 KiB or more with long strings (20 KiB and more) of every kind: escapes, Latin-1,
 * wide characters and emoji, nested lists, an escaped key, `__proto__` (the long-string route of
 * large answers, src/sink.rs).
 */
export function longStringsValue() {
  const long = (s) => s.repeat(Math.ceil((20 * 1024) / s.length))
  return {
    plain: long('x'),
    escaped: long('line "one"\n\ttab \\ slash / \u0001 '),
    latin1: long('café ÿ '),
    wide: long('snow ☃ and 😀 '),
    short: 'short',
    list: [long('a'), 1, [long('b'), { deep: long('c') }], null],
    'k"ey\n': long('d'),
    ['__proto__']: long('e'),
  }
}

/**
 * Whether this machine still has an open (ESTABLISHED) TCP connection from local port `from` to
 * remote port `to` (Linux: /proc/net/tcp and tcp6); `undefined` where the table cannot be read.
 * Tells whether a client dropped its end without relying on the server noticing it (Bun 1.3's
 * node:http server emits no 'close' for a client that goes away from an unanswered request).
 */
export function tcpOpen(from, to) {
  const hex = (port) => port.toString(16).toUpperCase().padStart(4, '0')
  let found = false
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      if (table.endsWith('6')) continue
      return undefined
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/)
      if (local?.endsWith(`:${hex(from)}`) && remote?.endsWith(`:${hex(to)}`) && state === '01') found = true
    }
  }
  return found
}

/**
 * Bun before 1.3.14 (seen on 1.3.7) can crash inside Bun itself — a segfault its own crash
 * handler reports, with no frame of the addon — when a worker thread that used the addon ends
 * (by `worker.terminate()` about 1 in 5 in isolation; by either end, every time, after the
 * conformance file in the full suite). Not on 1.3.14 (the 18.3.4 agent's floor), 1.4.x or
 * Node. The tests that end such a worker inside the test runner are skipped there; the one that
 * does it in a process of its own (worker-first) still runs.
 */
export const WORKER_END_CRASHES_BUN = /^1\.3\.([0-9]|1[0-3])$/.test(process.versions.bun ?? '')
