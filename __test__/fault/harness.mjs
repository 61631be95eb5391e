// The fault suite's runner: one case = one client path (bare transport, MCPClient with or
// without reconnect, the function API, MCPManager) against chaos servers (chaos-server.mjs) with
// the faults of the case's plan (plan.mjs), driven by a random workload of calls with short
// timeouts, aborts (own and shared signals) and closes racing the answers. After every case:
//   - every promise the case created settled by its own deadline (timeout + grace; after an
//     abort, abort time + grace);
//   - every rejection is a clear error (an Error with a string `code`) or the abort reason;
//     every answer that arrived is the answer to that call (no mixed-up ids);
//   - onClose: exactly once per connected→closed transport, at most once per MCPClient (once
//     if it ever connected), and every transport/client is closed at the end;
//   - no child or grandchild of the case alive (a marker argument, found in /proc/*/cmdline);
//   - open file descriptors (and sockets among them) back to the baseline; on Node, active
//     timers too; no abort listener left on any signal the case used;
//   - no unhandledRejection / uncaughtException while it ran.
// Any of these is a failure that names the case's seed; FAULT_CASE_SEED=<seed> runs it again.
import { spawn } from 'node:child_process'
import { getEventListeners } from 'node:events'
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import {
  HttpTransport,
  MCPClient,
  MCPManager,
  StdioTransport,
  callMCP,
  callTool,
  connectToServer,
  disconnectServer,
  listTools,
} from 'mcp-native/compat-12.7'
import { NODE, ROOT, processesWith } from '../helpers.mjs'
import { PATHS, makeCase } from './plan.mjs'
import { caseSeed, prng, randomSeed } from './prng.mjs'

const CHAOS = join(dirname(fileURLToPath(import.meta.url)), 'chaos-server.mjs')
/** Slack on every deadline (a loaded 2-core machine); FAULT_GRACE_MS overrides. */
export const GRACE = Number(process.env.FAULT_GRACE_MS ?? 1500)
/** How long the runtime's fetch keeps an idle socket it never sent on (undici's default keep-alive). */
const FETCH_POOL_IDLE_MS = 4500
const INIT_PARAMS = { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'fault-suite', version: '1' } }
const runTag = randomSeed().toString(36)

// --- run planning ----------------------------------------------------------------------------

/**
 * The cases of a run, from the environment (or `opts`): FAULT_CASE_SEED=a,b runs exactly those
 * case seeds; otherwise FAULT_CASES cases (default `defaultCases`) of run seed FAULT_SEED (default
 * random). FAULT_PATHS=client,manager restricts the client paths.
 */
export function planRun({ defaultCases = 200, env = process.env } = {}) {
  const paths = env.FAULT_PATHS ? env.FAULT_PATHS.split(',').filter((p) => PATHS.includes(p)) : PATHS
  if (env.FAULT_CASE_SEED) {
    const seeds = env.FAULT_CASE_SEED.split(',').map((s) => Number(s) >>> 0)
    const repeat = Math.max(1, Number(env.FAULT_REPEAT ?? 1))
    const cases = []
    for (let r = 0; r < repeat; r++) for (const seed of seeds) cases.push({ index: cases.length, seed, spec: makeCase(seed, { paths }) })
    return { seed: null, cases }
  }
  const seed = env.FAULT_SEED !== undefined && env.FAULT_SEED !== '' ? Number(env.FAULT_SEED) >>> 0 : randomSeed()
  const count = env.FAULT_CASES !== undefined && env.FAULT_CASES !== '' ? Number(env.FAULT_CASES) : defaultCases
  const cases = []
  for (let i = 0; i < count; i++) {
    const s = caseSeed(seed, i)
    cases.push({ index: i, seed: s, spec: makeCase(s, { paths }) })
  }
  return { seed, cases }
}

// --- process-wide hooks: unhandled errors and onClose accounting --------------------------------

let current = null // the running case
const orphanEvents = [] // process events while no case ran
const records = new WeakMap()
let installed = false

function rec(obj, kind) {
  let r = records.get(obj)
  if (!r) {
    // groups: runs of overlapping connect() calls started while not connected (each may end
    // in one onClose); connects: those groups that got connected (each must end in one).
    r = { kind, fn: undefined, closes: 0, connects: 0, groups: 0, inflight: 0, groupConnected: false, caseIndex: current?.index ?? null }
    r.call = (...a) => {
      r.closes++
      if (typeof r.fn === 'function') return r.fn(...a)
      return undefined
    }
    records.set(obj, r)
    if (current) current.objects.push(obj)
  }
  return r
}

/**
 * Counts what the package does: every StdioTransport, HttpTransport and MCPClient reads its
 * `onClose` property to call it, and assigns it in its constructor; an accessor on the prototype
 * sees both (so transports made inside MCPClient and MCPManager are counted too). A client's
 * `connect()` is wrapped to count its connect cycles. A transport's connected transitions are
 * counted where its state lives, the `_connected` field (an internal name, checked below): the
 * transports an MCPClient or MCPManager uses are faces over its Rust client, connected by it, never
 * through their own `connect()`.
 */
export function installHooks() {
  if (installed) return
  installed = true
  process.on('unhandledRejection', (reason) => (current ? current.events : orphanEvents).push({ type: 'unhandledRejection', reason }))
  process.on('uncaughtException', (error) => (current ? current.events : orphanEvents).push({ type: 'uncaughtException', reason: error }))
  // Process warnings (MaxListenersExceededWarning, …) are noted with the case, not failed.
  process.on('warning', (w) => current?.notes.push(`${w.name}: ${w.message}`))
  for (const [Class, kind] of [
    [StdioTransport, 'stdio'],
    [HttpTransport, 'http'],
    [MCPClient, 'client'],
  ]) {
    const proto = Class.prototype
    Object.defineProperty(proto, 'onClose', {
      configurable: true,
      get() {
        return rec(this, kind).call
      },
      set(fn) {
        rec(this, kind).fn = fn
      },
    })
    if (kind !== 'client') {
      Object.defineProperty(proto, '_connected', {
        configurable: true,
        get() {
          return rec(this, kind).up === true
        },
        set(v) {
          const r = rec(this, kind)
          if (v && !r.up) r.connects++
          r.up = Boolean(v)
        },
      })
      continue
    }
    const connect = proto.connect
    proto.connect = function (...a) {
      const r = rec(this, kind)
      // A connect() while the client reconnects joins that attempt: the same cycle, whose one
      // onClose comes when it is closed for good (not a cycle of its own).
      const was = kind === 'client' ? this.state === 'connected' || this.state === 'reconnecting' : this.connected
      if (!was && r.inflight === 0) r.groups++
      if (!was) r.inflight++
      const p = connect.apply(this, a)
      const settled = (ok) => {
        if (was) return
        if (ok) r.groupConnected = true
        if (--r.inflight === 0 && r.groupConnected) {
          r.connects++
          r.groupConnected = false
        }
      }
      p.then(
        () => settled(true),
        () => settled(false),
      )
      return p
    }
  }
  // The accounting only works while the package assigns `onClose` (never defines it as an own
  // field): check once, loudly.
  const probes = [
    new StdioTransport({ command: 'x' }),
    new HttpTransport({ type: 'http', url: 'http://127.0.0.1:9/' }),
    new MCPClient('x', {}),
  ]
  for (const p of probes) {
    if (Object.hasOwn(p, 'onClose'))
      throw new Error(`fault suite: ${p.constructor.name} defines onClose as an own property; onClose accounting cannot work`)
    if (p instanceof MCPClient) continue
    if (Object.hasOwn(p, '_connected') || records.get(p)?.up !== false)
      throw new Error(`fault suite: ${p.constructor.name} no longer keeps its state in _connected; transition accounting cannot work`)
  }
}

/** Events that happened while no case was running (reported by the runners). */
export function orphanProcessEvents() {
  return orphanEvents.splice(0)
}

// --- resources of the test process -----------------------------------------------------------

function fdSnapshot() {
  const fds = new Map()
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      fds.set(fd, readlinkSync(`/proc/self/fd/${fd}`))
    } catch {
      // the descriptor readdir itself used, or one closed meanwhile
    }
  }
  let sockets = 0
  for (const target of fds.values()) if (target.startsWith('socket:')) sockets++
  return { total: fds.size, sockets, fds }
}

function fdKinds(snapshot) {
  const kinds = {}
  for (const target of snapshot.fds.values()) {
    const kind = target.replace(/\[\d+\]$/, '').replace(/^\/.*/, 'file')
    kinds[kind] = (kinds[kind] ?? 0) + 1
  }
  return kinds
}

const TCP_STATES = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '0A': 'LISTEN',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '09': 'LAST_ACK',
}

/** What a socket inode is: a TCP connection (ports, state) or a Unix socket. */
function socketInfo(inodes) {
  const info = new Map()
  for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text = ''
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10 || !inodes.has(f[9])) continue
      const port = (a) => Number.parseInt(a.split(':')[1], 16)
      info.set(f[9], `tcp :${port(f[1])}→:${port(f[2])} ${TCP_STATES[f[3]] ?? f[3]}`)
    }
  }
  for (const inode of inodes) if (!info.has(inode)) info.set(inode, 'unix/other')
  return info
}

/** The descriptors of `after` that `before` did not have, described. */
function newFds(before, after) {
  const old = new Set(before.fds.values())
  const added = [...after.fds.values()].filter((t) => !old.has(t))
  const inodes = new Set(added.filter((t) => t.startsWith('socket:')).map((t) => t.slice(8, -1)))
  const sockets = socketInfo(inodes)
  return added.map((t) => (t.startsWith('socket:') ? `${t} ${sockets.get(t.slice(8, -1))}` : t))
}

/** Active timers (Node only; Bun reports none). */
function timerCount() {
  if (process.versions.bun || typeof process.getActiveResourcesInfo !== 'function') return null
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
}

function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 200)
  } catch {
    return '(gone)'
  }
}

// --- small helpers -----------------------------------------------------------------------------

function describeError(e) {
  if (e instanceof Error) return `${e.constructor.name}${e.code ? `[${e.code}]` : ''}: ${e.message}`
  return `${typeof e}: ${String(e)}`
}

function reasonFor(kind) {
  if (kind === 'error') return Object.assign(new Error('chaos abort'), { code: 'CHAOS_ABORT' })
  if (kind === 'string') return 'chaos-abort-reason'
  return undefined // the platform's AbortError
}

const delay = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/** Waits for `promise` at most `ms` (the timer is cleared either way). */
async function within(promise, ms) {
  let timer
  await Promise.race([promise, new Promise((r) => (timer = setTimeout(r, Math.max(0, ms))))])
  clearTimeout(timer)
}

// --- one case ------------------------------------------------------------------------------------

class Case {
  constructor(entry) {
    this.index = entry.index
    this.seed = entry.seed
    this.spec = entry.spec
    this.rnd = prng(entry.seed ^ 0x5bd1e995)
    this.marker = `mcpfault.${process.pid}.${runTag}.${entry.seed}.${entry.index}.`
    this.ops = []
    this.failures = []
    this.notes = []
    this.objects = []
    this.events = []
    this.signals = []
    this.controllers = []
    this.timers = new Set()
    this.http = []
    this.closers = []
    this.finalClose = null
    // Set by a callMCP op: the runtime's fetch pool may keep a socket (see checkFds).
    this.usedFetch = false
    this.t0 = performance.now()
    this.dir = mkdtempSync(join(tmpdir(), 'mcp-fault-'))
    this.shared = new AbortController()
    this.signals.push(this.shared.signal)
  }

  now() {
    return Math.round(performance.now() - this.t0)
  }

  fail(kind, detail) {
    this.failures.push({ kind, detail })
  }

  /** Runs `fn` at `ms` after the case started (cleared when the case ends). */
  at(ms, fn) {
    const h = setTimeout(
      () => {
        this.timers.delete(h)
        try {
          fn()
        } catch (e) {
          this.fail('harness', `scheduled step threw: ${describeError(e)}`)
        }
      },
      Math.max(0, ms - this.now()),
    )
    this.timers.add(h)
  }

  async until(ms) {
    await delay(ms - this.now())
  }

  /**
   * Tracks a promise of the package: it must settle by `start + bound`, or, once a signal it
   * uses is aborted, by `abort + abortGrace`. `check(op)` inspects the outcome.
   */
  track(label, promise, bound, { signals = [], check, abortGrace = GRACE, deadline } = {}) {
    const op = { label, start: this.now(), bound, signals, check, abortGrace, deadline, state: 'pending' }
    op.abortedAt = () => {
      let first = null
      for (const s of signals) {
        const at = s.__abortedAt
        if (at !== undefined && at >= op.start && (first === null || at < first)) first = at
        else if (at !== undefined && at < op.start && first === null) first = op.start
      }
      return first
    }
    op.done = Promise.resolve(promise).then(
      (value) => {
        op.state = 'fulfilled'
        op.end = this.now()
        op.value = value
      },
      (error) => {
        op.state = 'rejected'
        op.end = this.now()
        op.error = error
      },
    )
    this.ops.push(op)
    return op
  }

  deadlineOf(op) {
    if (op.deadline) return op.deadline()
    let d = op.start + op.bound
    const aborted = op.abortedAt()
    if (aborted !== null) d = Math.min(d, aborted + op.abortGrace)
    return d
  }

  /** A signal for `op`: its own (aborted at `op.abortAfter` after it starts), the shared one, or none. */
  signalFor(op) {
    if (op.abortAfter !== undefined) {
      const c = new AbortController()
      this.controllers.push(c)
      this.signals.push(c.signal)
      this.at(this.now() + op.abortAfter, () => this.abort(c, op.reason))
      return c.signal
    }
    if (op.shared) return this.shared.signal
    return undefined
  }

  abort(controller, reasonKind) {
    if (controller.signal.aborted) return
    controller.signal.__abortedAt = this.now()
    const reason = reasonFor(reasonKind)
    if (reason === undefined) controller.abort()
    else controller.abort(reason)
  }

  /** A rejection must be the abort reason of a signal the op used, or an Error with a code. */
  clearError(op, error) {
    for (const s of op.signals) if (s.aborted && error === s.reason) return null
    if (error instanceof Error && typeof error.code === 'string' && error.message) return null
    return `${op.label}: unclear rejection ${describeError(error)}`
  }

  // --- servers ---------------------------------------------------------------------------------

  async startServers() {
    this.configs = []
    for (const s of this.spec.servers) {
      const plan = JSON.stringify(s.plan)
      if (s.kind === 'stdio') {
        this.configs.push({
          command: NODE,
          args: [CHAOS, `--plan=${plan}`, `--state=${join(this.dir, `${s.name}.lives`)}`, `--marker=${this.marker}`],
          timeout: s.timeout,
          killGraceMs: s.killGraceMs,
          ...s.extra,
        })
        continue
      }
      const child = spawn(NODE, [CHAOS, '--role=http', `--plan=${plan}`, `--marker=${this.marker}http.`], {
        stdio: ['ignore', 'pipe', process.env.FAULT_DEBUG ? 'inherit' : 'ignore'],
      })
      const exited = new Promise((r) => child.once('exit', r))
      this.http.push({ child, exited })
      let port
      await within(
        new Promise((resolve) => {
          let text = ''
          child.stdout.on('data', (d) => {
            text += d
            const nl = text.indexOf('\n')
            if (nl >= 0) {
              port = JSON.parse(text.slice(0, nl)).port
              resolve()
            }
          })
          child.once('exit', resolve)
        }),
        10000,
      )
      child.stdout.destroy()
      if (!port) throw new Error('chaos HTTP server did not start')
      this.configs.push({ type: s.kind, url: `http://127.0.0.1:${port}/mcp`, timeout: s.timeout, ...s.extra })
    }
  }

  async stopServers() {
    for (const { child, exited } of this.http) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await within(exited, 5000)
    }
  }

  // --- bounds (ms) -------------------------------------------------------------------------------

  closeBound(s) {
    // stdio: SIGTERM → killGraceMs → SIGKILL → reaped; HTTP: the DELETE, bounded by the timeout.
    return (s.kind === 'stdio' ? s.killGraceMs : s.timeout) + GRACE
  }

  requestTimeout(s, op) {
    return op?.timeout ?? s.timeout
  }

  /** A bare transport request. */
  transportBound(s, op) {
    return this.requestTimeout(s, op) + (op?.resetTimeoutOnProgress ? 500 : 0) + GRACE
  }

  /**
   * A request through MCPClient: waiting for a (re)connect (≤ its timeout), then the request;
   * on HTTP, after a session expiry, re-initializing (initialize + initialized, each ≤ the
   * config timeout) and the one retry.
   */
  clientBound(s, op) {
    const rt = this.requestTimeout(s, op) + (op?.resetTimeoutOnProgress ? 500 : 0)
    return (s.kind === 'stdio' ? 2 * rt : 3 * rt + 2 * s.timeout) + GRACE
  }

  /** connectToServer / MCPClient.connect: the connect deadline, then the transport's close. */
  connectBound(s) {
    return s.timeout + this.closeBound(s) + GRACE
  }

  /** How long leftovers may take to go away after everything settled. */
  settleMs() {
    let ms = 0
    for (const s of this.spec.servers) ms = Math.max(ms, s.timeout + 2 * (s.killGraceMs ?? 0) + (s.kind === 'stdio' ? 0 : s.timeout))
    return ms + 2 * GRACE
  }

  // --- checks ------------------------------------------------------------------------------------

  async waitOps() {
    for (let i = 0; i < this.ops.length; i++) {
      const op = this.ops[i]
      while (op.state === 'pending') {
        const left = this.deadlineOf(op) - this.now()
        if (left <= 0) break
        await within(op.done, Math.min(left, 100))
      }
      if (op.state === 'pending') {
        op.hung = true
        const aborted = op.abortedAt()
        this.fail(
          'hang',
          `${op.label}: still pending ${this.now() - op.start} ms after it started (bound ${op.bound} ms${aborted !== null ? `, aborted at +${aborted - op.start} ms` : ''})`,
        )
      }
    }
  }

  checkOutcomes() {
    for (const op of this.ops) {
      if (op.state === 'rejected') {
        const problem = op.check?.rejected ? op.check.rejected(op) : this.clearError(op, op.error)
        if (problem) this.fail('unclear-error', problem)
      } else if (op.state === 'fulfilled' && op.check?.fulfilled) {
        const problem = op.check.fulfilled(op)
        if (problem) this.fail('wrong-answer', problem)
      }
    }
  }

  async checkObjects() {
    const open = () =>
      this.objects.filter((o) => {
        const r = records.get(o)
        return r.kind === 'client' ? o.state !== 'closed' && o.state !== 'idle' : o.connected
      })
    const deadline = this.now() + this.settleMs()
    while (open().length > 0 && this.now() < deadline) await delay(25)
    for (const o of open()) {
      const r = records.get(o)
      this.fail('left-open', `${r.kind} ${r.kind === 'client' ? `state=${o.state}` : 'still connected'} after everything was closed`)
    }
    for (const o of this.objects) {
      const r = records.get(o)
      if (r.kind === 'client') {
        // Once when closed for good (close(), a drop without reconnect, reconnect giving up);
        // connect() after that starts again.
        if (r.closes > Math.max(1, r.groups))
          this.fail('onclose', `MCPClient onClose called ${r.closes} times in ${r.groups} connect cycle(s)`)
        if (r.closes < r.connects && o.state === 'closed')
          this.fail('onclose', `MCPClient connected ${r.connects} time(s), then closed, but onClose ran ${r.closes} time(s)`)
      } else if (r.closes !== r.connects && !o.connected) {
        this.fail('onclose', `${r.kind} transport: onClose called ${r.closes} times for ${r.connects} connected→closed transitions`)
      }
    }
  }

  async checkProcesses() {
    const deadline = this.now() + this.settleMs()
    let left = processesWith(this.marker).filter((pid) => !this.isHttpServer(pid))
    while (left.length > 0 && this.now() < deadline) {
      await delay(25)
      left = processesWith(this.marker).filter((pid) => !this.isHttpServer(pid))
    }
    if (left.length > 0) {
      this.fail('process-leak', left.map((pid) => `pid ${pid}: ${cmdline(pid)}`).join('; '))
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone meanwhile
        }
      }
    }
  }

  isHttpServer(pid) {
    return this.http.some(({ child }) => child.pid === pid)
  }

  /** Runs after every transport reported closed and every process is gone: what is left of
   * their descriptors goes within the grace period. */
  async checkFds(base) {
    // callMCP is the runtime's fetch (SPEC 4). A fetch aborted while its connection was still
    // being made leaves that new socket idle in the runtime's global pool (no request was sent
    // on it, so `Connection: close` cannot apply) until the pool's idle timeout (undici: 4 s).
    // That pool is not the package's; the socket must still be gone by then.
    const deadline = this.now() + GRACE + (this.usedFetch ? FETCH_POOL_IDLE_MS : 0)
    let snap = fdSnapshot()
    while ((snap.total > base.total || snap.sockets > base.sockets) && this.now() < deadline) {
      await delay(25)
      snap = fdSnapshot()
    }
    if (snap.total > base.total || snap.sockets > base.sockets) {
      const before = fdKinds(base)
      const after = fdKinds(snap)
      const delta = Object.keys(after)
        .filter((k) => after[k] > (before[k] ?? 0))
        .map((k) => `${k} +${after[k] - (before[k] ?? 0)}`)
      this.fail(
        'fd-leak',
        `open fds ${base.total} → ${snap.total}, sockets ${base.sockets} → ${snap.sockets} (${delta.join(', ')}); new: ${newFds(base, snap).join(', ')}`,
      )
    }
  }

  async checkTimers(base) {
    if (base === null) return
    const deadline = this.now() + GRACE
    let n = timerCount()
    while (n > base && this.now() < deadline) {
      await delay(25)
      n = timerCount()
    }
    if (n > base) this.fail('timer-leak', `active timers ${base} → ${n}`)
  }

  checkListeners() {
    for (const s of this.signals) {
      let n = 0
      try {
        n = getEventListeners(s, 'abort').length
      } catch {
        return // not supported here
      }
      if (n > 0) this.fail('listener-leak', `${n} abort listener(s) left on a signal the case used`)
    }
  }

  checkEvents() {
    for (const e of this.events) this.fail(e.type, describeError(e.reason))
  }
}

// --- workloads -----------------------------------------------------------------------------------

function scheduleSharedAbort(c) {
  if (c.spec.sharedAbortAt !== null) c.at(c.spec.sharedAbortAt, () => c.abort(c.shared, c.spec.sharedReason))
}

function message(c, op) {
  return `m${c.seed}-${op.i}`
}

function toolArgs(c, op) {
  const args = toolArgsOf(c, op)
  if (op.args.pad) args.pad = 'p'.repeat(op.args.pad)
  return args
}

function toolArgsOf(c, op) {
  const msg = message(c, op)
  const a = op.args
  switch (op.tool) {
    case 'slow':
      return { message: msg, ms: a.ms }
    case 'big':
      return { message: msg, bytes: a.bytes }
    case 'notify':
      return { message: msg, count: a.count }
    case 'progress':
      return { message: msg, steps: a.steps }
    default:
      return { message: msg }
  }
}

function requestOptions(c, op, signal) {
  const o = {}
  if (op.timeout !== undefined) o.timeout = op.timeout
  if (signal) o.signal = signal
  if (op.onProgress) o.onProgress = () => {}
  if (op.resetTimeoutOnProgress) {
    o.resetTimeoutOnProgress = true
    if (c.rnd.chance(0.5)) o.maxTotalTimeout = (op.timeout ?? 500) * 2
  }
  return o
}

/** tools/call answers must carry the call's own message (nothing mixed up, nothing oversized). */
function callCheck(c, op, unwrap = (v) => v) {
  const msg = message(c, op)
  return {
    fulfilled: (o) => {
      const result = unwrap(o.value)
      if (result === null) return null
      const text = result?.content?.[0]?.text
      if (typeof text !== 'string' || !text.startsWith(msg) || (op.tool !== 'big' && text !== msg))
        return `${o.label}: answer is not this call's: ${JSON.stringify(result)?.slice(0, 200)}`
      return null
    },
  }
}

/** `op.burst` echo calls made in one tick through `call(name, args)`, each checked for its own answer. */
function burst(c, op, label, signals, bound, call) {
  const base = message(c, op)
  for (let k = 0; k < op.burst; k++) {
    const msg = `${base}.${k}`
    c.track(`${label} #${k}`, call('echo', { message: msg }), bound, {
      signals,
      check: {
        fulfilled: (o) => {
          const text = o.value?.content?.[0]?.text
          return o.value === null || text === msg
            ? null
            : `${o.label}: answer is not this call's: ${JSON.stringify(o.value)?.slice(0, 200)}`
        },
      },
    })
  }
}

function randomRequestHandler(c) {
  const kind = c.rnd.pick(['none', 'value', 'throw', 'slow', 'reject'])
  if (kind === 'none') return undefined
  return (method) => {
    if (kind === 'throw') throw new Error(`chaos handler refuses ${method}`)
    if (kind === 'reject') return Promise.reject(Object.assign(new Error('nope'), { rpcCode: -32000 }))
    if (kind === 'slow') return new Promise((r) => c.at(c.now() + 100, () => r({ roots: [] })))
    return { roots: [] }
  }
}

function wireCallbacks(c, target) {
  target.onNotification = () => {}
  target.onError = () => {}
  if (c.rnd.chance(0.2)) {
    // A user callback that throws must never reach the host.
    target.onNotification = () => {
      throw new Error('chaos onNotification throws')
    }
  }
  const handler = randomRequestHandler(c)
  if (handler) target.onRequest = handler
  if (target instanceof StdioTransport || target instanceof MCPClient) {
    if (c.rnd.chance(0.5)) target.onStderr = () => {}
  }
}

function transportOp(c, t, s, op) {
  const signal = c.signalFor(op)
  const signals = signal ? [signal] : []
  const opts = requestOptions(c, op, signal)
  const label = `op ${op.i} ${op.kind}${op.kind === 'call' ? ` ${op.tool}` : ''} (+${op.at} ms, timeout ${op.timeout ?? 'config'}, abort ${op.abortAfter ?? (op.shared ? 'shared' : 'none')})`
  switch (op.kind) {
    case 'call':
      return c.track(label, t.request('tools/call', { name: op.tool, arguments: toolArgs(c, op) }, opts), c.transportBound(s, op), {
        signals,
        check: callCheck(c, op),
      })
    case 'ping':
      return c.track(label, t.request('ping', {}, opts), c.transportBound(s, op), { signals })
    case 'list':
      return c.track(label, t.request('tools/list', {}, opts), c.transportBound(s, op), { signals })
    case 'unknown':
      return c.track(label, t.request('chaos/unknown', { x: 1 }, opts), c.transportBound(s, op), { signals })
    case 'burst':
      return burst(c, op, label, signals, c.transportBound(s, op), (name, args) => t.request('tools/call', { name, arguments: args }, opts))
    case 'reconnect':
      // connect() again: a no-op while connected; after a close, a fresh process or session.
      return c.track(label, t.connect(), c.closeBound(s) + GRACE)
    case 'callMCP': {
      c.usedFetch = true
      const timeout = op.timeout ?? s.timeout
      // callMCP is the runtime's `fetch` (SPEC 4): an idle keep-alive socket stays in the
      // runtime's global pool for the server's keep-alive hint (the chaos server's is 120 s).
      // That pool is not this package's to close, so the case asks for no keep-alive, and the
      // fd check still sees any socket callMCP itself would leave.
      const headers = { Connection: 'close' }
      const o = signal ? { timeout, signal, headers } : { timeout, headers }
      // SPEC 4 keeps the reference's contract here: the first truthy `data:` value of an SSE
      // body is returned even when it is a notification, a `data:` line that is not JSON throws
      // a SyntaxError, and failures are plain Errors (`MCP request failed: …`, fetch's own).
      // So: an answer, when it is one, must be this call's; a rejection must be an Error.
      const answers = callCheck(c, op, (envelope) => (envelope && 'result' in envelope && !('method' in envelope) ? envelope.result : null))
      // callMCP has no message size limit (the reference's contract): the chaos server's
      // oversized answer (its own text, exactly that long) is a right answer here.
      const oversize = s.plan?.faults?.oversize?.bytes
      const isOversize = (o) => {
        const text = o.value?.result?.content?.[0]?.text
        return oversize !== undefined && typeof text === 'string' && text.length === oversize && /^o+$/.test(text)
      }
      return c.track(label, callMCP(t.url, 'tools/call', { name: op.tool, arguments: toolArgs(c, op) }, o), timeout + GRACE, {
        signals,
        check: {
          fulfilled: (o) => (isOversize(o) ? null : answers.fulfilled(o)),
          rejected: (x) => {
            for (const sig of signals) if (sig.aborted && x.error === sig.reason) return null
            return x.error instanceof Error && x.error.message ? null : `${x.label}: unclear rejection ${describeError(x.error)}`
          },
        },
      })
    }
    default:
      return c.track(label, t.notify('notifications/chaos', { message: message(c, op) }), (s.kind === 'stdio' ? 0 : s.timeout) + GRACE)
  }
}

async function driveTransport(c) {
  const s = c.spec.servers[0]
  const config = c.configs[0]
  const t = s.kind === 'stdio' ? new StdioTransport(config) : new HttpTransport(config)
  wireCallbacks(c, t)
  c.closers.push({ label: 'transport', bound: c.closeBound(s), close: () => t.close() })
  const connect = c.track('connect', t.connect(), GRACE)
  await connect.done
  if (connect.state !== 'fulfilled') return
  const init = c.track('initialize', t.request('initialize', INIT_PARAMS), c.transportBound(s))
  if (c.spec.closeAt !== null) {
    c.at(c.spec.closeAt, () => {
      c.track('close (racing)', t.close(), c.closeBound(s))
      if (c.spec.doubleClose) c.track('close (racing, twice)', t.close(), c.closeBound(s))
    })
  }
  for (const op of c.spec.ops) c.at(op.at, () => transportOp(c, t, s, op))
  scheduleSharedAbort(c)
  await within(init.done, c.spec.endAt - c.now())
  if (init.state === 'fulfilled') {
    c.track('notify initialized', t.notify('notifications/initialized'), (s.kind === 'stdio' ? 0 : s.timeout) + GRACE)
    if (s.kind !== 'stdio' && c.spec.listener) {
      c.track('startSSEListener', t.startSSEListener(), Number.POSITIVE_INFINITY, {
        deadline: () => (c.finalClose ? (c.finalClose.state === 'pending' ? c.deadlineOf(c.finalClose) : c.finalClose.end) + GRACE : 1e12),
      })
    }
  }
  await c.until(c.spec.endAt)
  c.finalClose = c.track('final close', t.close(), c.closeBound(s))
}

function clientOp(c, api, s, op) {
  const signal = c.signalFor(op)
  const signals = signal ? [signal] : []
  const opts = requestOptions(c, op, signal)
  const label = `op ${op.i} ${op.kind}${op.kind === 'call' ? ` ${op.tool}` : ''} (+${op.at} ms, timeout ${op.timeout ?? 'config'}, abort ${op.abortAfter ?? (op.shared ? 'shared' : 'none')})`
  const bound = c.clientBound(s, op)
  switch (op.kind) {
    case 'call':
      return c.track(label, api.callTool(op.tool, toolArgs(c, op), opts), bound, { signals, check: callCheck(c, op) })
    case 'ping':
      return c.track(label, api.ping(opts), c.clientBound(s), { signals })
    case 'listTools':
      return c.track(label, api.listTools(opts), bound, { signals })
    case 'refreshTools':
      return c.track(label, api.refreshTools(opts), bound, { signals })
    case 'burst':
      return burst(c, op, label, signals, bound, (name, args) => api.callTool(name, args, opts))
    case 'reconnect':
      return c.track(label, api.connect(), c.connectBound(s))
    default:
      return c.track(label, api.request('chaos/unknown', {}, opts), bound, { signals })
  }
}

async function driveClient(c) {
  const s = c.spec.servers[0]
  const client = new MCPClient(s.name, c.configs[0], c.spec.reconnect ? { reconnect: c.spec.reconnect } : undefined)
  wireCallbacks(c, client)
  client.onStatus = () => {}
  c.closers.push({ label: 'client', bound: c.closeBound(s), close: () => client.close() })
  let signal
  if (c.spec.connectSignalAbortAt !== null) {
    const ctl = new AbortController()
    c.controllers.push(ctl)
    c.signals.push(ctl.signal)
    signal = ctl.signal
    c.at(c.spec.connectSignalAbortAt, () => c.abort(ctl, c.spec.sharedReason))
  }
  c.track('connect', client.connect(signal ? { signal } : undefined), c.connectBound(s), {
    signals: signal ? [signal] : [],
    abortGrace: c.closeBound(s) + GRACE,
  })
  const api = {
    callTool: (name, args, o) => client.callTool(name, args, o),
    ping: () => client.ping(),
    listTools: (o) => client.listTools(o),
    refreshTools: (o) => client.refreshTools(o),
    request: (m, p, o) => client.request(m, p, o),
    connect: () => client.connect(),
  }
  if (c.spec.closeAt !== null) {
    c.at(c.spec.closeAt, () => {
      c.track('close (racing)', client.close(), c.closeBound(s) + s.timeout)
      if (c.spec.doubleClose) c.track('close (racing, twice)', client.close(), c.closeBound(s) + s.timeout)
    })
  }
  for (const op of c.spec.ops) c.at(op.at, () => clientOp(c, api, s, op))
  scheduleSharedAbort(c)
  await c.until(c.spec.endAt)
  c.finalClose = c.track('final close', client.close(), c.closeBound(s) + s.timeout)
}

async function driveFunctionApi(c) {
  const s = c.spec.servers[0]
  let signal
  if (c.spec.connectSignalAbortAt !== null) {
    const ctl = new AbortController()
    c.controllers.push(ctl)
    c.signals.push(ctl.signal)
    signal = ctl.signal
    c.at(c.spec.connectSignalAbortAt, () => c.abort(ctl, c.spec.sharedReason))
  }
  const connect = c.track('connectToServer', connectToServer(s.name, c.configs[0], signal ? { signal } : undefined), c.connectBound(s), {
    signals: signal ? [signal] : [],
    abortGrace: c.closeBound(s) + GRACE,
  })
  c.closers.push({
    label: 'connection',
    bound: c.closeBound(s) + s.timeout,
    close: async () => {
      await connect.done
      if (connect.state === 'fulfilled') await disconnectServer(connect.value)
    },
  })
  const conn = () => (connect.state === 'fulfilled' ? connect.value : null)
  const api = {
    callTool: (name, args, o) => (conn() ? callTool(conn(), name, args, o) : Promise.resolve(null)),
    ping: () => (conn() ? callTool(conn(), 'echo', { message: 'ping' }) : Promise.resolve(null)),
    listTools: (o) => (conn() ? listTools(conn(), o) : Promise.resolve(null)),
    refreshTools: (o) => {
      if (!conn()) return Promise.resolve(null)
      delete conn().tools
      return listTools(conn(), o)
    },
    request: (m, p, o) => (conn() ? conn().transport.request(m, p, o) : Promise.resolve(null)),
  }
  if (c.spec.closeAt !== null) {
    c.at(c.spec.closeAt, () => {
      if (conn()) c.track('disconnectServer (racing)', disconnectServer(conn()), c.closeBound(s) + s.timeout)
    })
  }
  for (const op of c.spec.ops) c.at(op.at, () => clientOp(c, api, s, op))
  scheduleSharedAbort(c)
  await c.until(c.spec.endAt)
  await within(connect.done, c.deadlineOf(connect) - c.now())
  if (conn()) c.finalClose = c.track('final disconnectServer', disconnectServer(conn()), c.closeBound(s) + s.timeout)
}

function memoryCache(servers) {
  const map = new Map()
  for (const s of servers) map.set(s.name, [{ name: 'echo', description: 'cached', inputSchema: { type: 'object' } }])
  return {
    async get(name) {
      return map.get(name) ?? null
    },
    async set(name, _config, tools) {
      map.set(name, tools)
    },
  }
}

async function driveManager(c) {
  const servers = c.spec.servers
  const m = new MCPManager(ROOT, c.spec.useCache ? memoryCache(servers) : null, {
    reconnect: c.spec.reconnect ?? undefined,
    onServerStatus: () => {},
    logger: { error() {}, warn() {}, debug() {} },
  })
  const configs = {}
  const sources = {}
  servers.forEach((s, i) => {
    configs[s.name] = c.configs[i]
    sources[s.name] = { provider: 'fault', providerName: 'Fault suite', path: '/fault', level: 'project' }
  })
  const worst = (f) => Math.max(...servers.map(f))
  const connectAll = worst((s) => c.connectBound(s) + c.clientBound(s) + c.closeBound(s)) + 250 + GRACE
  const closeAll = worst((s) => c.closeBound(s) + s.timeout) + GRACE
  c.closers.push({ label: 'manager', bound: closeAll, close: () => m.disconnectAll() })
  c.track(
    'connectServers',
    m.connectServers(configs, sources, () => {}),
    connectAll,
    {
      check: {
        fulfilled: (o) => (o.value && o.value.errors instanceof Map ? null : `connectServers: odd result ${JSON.stringify(o.value)}`),
      },
    },
  )
  const managerOp = (op) => {
    const s = servers[op.server % servers.length]
    const label = `op ${op.i} ${op.kind} ${s.name} (+${op.at} ms, abort ${op.abortAfter ?? (op.shared ? 'shared' : 'none')})`
    switch (op.kind) {
      case 'execute': {
        const tools = m.getTools().filter((t) => t.mcpServerName === s.name)
        const tool = tools.find((t) => t.mcpToolName === op.tool) ?? tools[0]
        if (!tool) return
        const signal = c.signalFor(op)
        const params = tool.mcpToolName === op.tool ? toolArgs(c, op) : { message: message(c, op) }
        const checkOp = { ...op, tool: tool.mcpToolName }
        return c.track(
          `${label} tool ${tool.mcpToolName}`,
          tool.execute(`call-${op.i}`, params, undefined, undefined, signal),
          c.connectBound(s) + c.clientBound(s) + GRACE,
          {
            signals: signal ? [signal] : [],
            check: {
              fulfilled: (o) => {
                const r = o.value
                if (r?.details?.isError) return null
                const text = r?.content?.[0]?.text
                const msg = message(c, op)
                if (typeof text !== 'string' || !text.startsWith(msg) || (checkOp.tool !== 'big' && text !== msg))
                  return `${o.label}: answer is not this call's: ${JSON.stringify(r)?.slice(0, 200)}`
                return null
              },
              rejected: (o) => {
                // A tool object reports failures in its result; only an abort may reject.
                if (!signal?.aborted) return `${o.label}: execute rejected without an abort: ${describeError(o.error)}`
                if (o.error === signal.reason || o.error instanceof Error) return null
                return `${o.label}: unclear rejection ${describeError(o.error)}`
              },
            },
          },
        )
      }
      case 'disconnectServer':
        return c.track(label, m.disconnectServer(s.name), c.closeBound(s) + s.timeout + GRACE)
      case 'disconnectAll':
        return c.track(label, m.disconnectAll(), closeAll)
      case 'refreshAll':
        return c.track(
          label,
          m.refreshAllTools(),
          worst((x) => c.clientBound(x)),
        )
      case 'connectAgain':
        // Servers already connected or connecting are skipped; after a disconnect, they start anew.
        return c.track(label, m.connectServers(configs, sources), connectAll)
      default:
        return c.track(label, m.waitForConnection(s.name), connectAll, {
          check: { rejected: (o) => (o.error instanceof Error ? null : `${o.label}: unclear rejection ${describeError(o.error)}`) },
        })
    }
  }
  if (c.spec.closeAt !== null) c.at(c.spec.closeAt, () => c.track('disconnectAll (racing)', m.disconnectAll(), closeAll))
  for (const op of c.spec.ops) c.at(op.at, () => managerOp(op))
  scheduleSharedAbort(c)
  await c.until(c.spec.endAt)
  c.finalClose = c.track('final disconnectAll', m.disconnectAll(), closeAll)
  await within(c.finalClose.done, c.deadlineOf(c.finalClose) - c.now())
  c.afterClose = () => {
    if (m.getTools().length > 0 || m.getConnectedServers().length > 0)
      c.fail('left-open', `manager after disconnectAll: ${m.getTools().length} tools, servers [${m.getConnectedServers()}]`)
  }
}

const DRIVERS = {
  'stdio-transport': driveTransport,
  'http-transport': driveTransport,
  client: driveClient,
  'client-reconnect': driveClient,
  'function-api': driveFunctionApi,
  manager: driveManager,
}

let warmedUp = false
/**
 * Brings up what the package sets up once per process (its I/O runtime, signal handling for
 * child processes, the HTTP stack), so that the first case's descriptor count is not blamed for
 * it: one clean stdio and one clean HTTP exchange.
 */
async function warmUp() {
  if (warmedUp) return
  warmedUp = true
  const c = new Case({
    index: -1,
    seed: 1,
    spec: {
      servers: [
        { name: 'w', kind: 'stdio', plan: { seed: 1, faults: {} }, timeout: 5000, killGraceMs: 100, extra: {} },
        { name: 'h', kind: 'http', plan: { seed: 1, faults: { sseP: 0.5 } }, timeout: 5000, extra: {} },
      ],
    },
  })
  try {
    await c.startServers()
    for (const config of c.configs) {
      const client = new MCPClient('warm-up', config)
      await client.connect()
      await client.callTool('echo', { message: 'warm' })
      await client.close()
    }
  } finally {
    await c.stopServers()
    rmSync(c.dir, { recursive: true, force: true })
  }
}

/** Runs one case; resolves with `{ index, seed, path, failures, ms, ops }` (never rejects). */
export async function runCase(entry) {
  installHooks()
  await warmUp()
  const c = new Case(entry)
  current = c
  let base
  let timersBase = null
  try {
    await c.startServers()
    await delay(20) // the HTTP servers' stdout pipes close
    base = fdSnapshot()
    timersBase = timerCount()
    c.t0 = performance.now()
    await DRIVERS[c.spec.path](c)
  } catch (e) {
    c.fail('harness', describeError(e))
    base ??= fdSnapshot()
  }
  await c.waitOps()
  // Whatever is still open (a close that hung, a connect that finished late) is closed again.
  for (const closer of c.closers) {
    const op = c.track(`teardown ${closer.label}.close()`, closer.close(), closer.bound)
    while (op.state === 'pending' && c.now() < c.deadlineOf(op)) await within(op.done, 100)
    if (op.state === 'pending') c.fail('hang', `${op.label}: still pending after ${op.bound} ms`)
  }
  for (const h of c.timers) clearTimeout(h)
  c.timers.clear()
  c.checkOutcomes()
  c.afterClose?.()
  await c.checkObjects()
  await c.checkProcesses()
  await c.checkFds(base)
  c.checkListeners()
  await c.stopServers()
  await c.checkTimers(timersBase)
  // Let late process events of this case land here rather than in the next one.
  await delay(10)
  c.checkEvents()
  current = null
  try {
    rmSync(c.dir, { recursive: true, force: true })
  } catch {
    // nothing to keep
  }
  return {
    index: c.index,
    seed: c.seed,
    path: c.spec.path,
    spec: c.spec,
    failures: c.failures,
    notes: [...new Set(c.notes)],
    ms: c.now(),
    ops: c.ops.map((o) => ({
      label: o.label,
      state: o.hung ? 'HUNG' : o.state,
      ms: o.end !== undefined ? o.end - o.start : null,
      error: o.state === 'rejected' ? describeError(o.error) : undefined,
    })),
  }
}

/** A failing case, with what is needed to run it again. */
export function describeCase(result) {
  const lines = [
    `case #${result.index} seed ${result.seed} path ${result.path}: ${result.failures.length === 0 ? 'ok' : `${result.failures.length} failure(s)`}`,
  ]
  for (const f of result.failures) lines.push(`  [${f.kind}] ${f.detail}`)
  for (const n of result.notes ?? []) lines.push(`  note: ${n}`)
  if (result.failures.length > 0) {
    lines.push(`  servers: ${JSON.stringify(result.spec.servers)}`)
    const { servers: _s, ops, ...rest } = result.spec
    lines.push(`  case: ${JSON.stringify(rest)}`)
    lines.push(`  ops: ${JSON.stringify(ops)}`)
    for (const o of result.ops)
      lines.push(`    ${o.label}: ${o.state}${o.ms !== null ? ` in ${o.ms} ms` : ''}${o.error ? ` (${o.error})` : ''}`)
    lines.push(`  again: FAULT_CASE_SEED=${result.seed} npm run test:fault`)
  }
  return lines.join('\n')
}

/** Runs a whole plan (the CLI runner); logs as it goes; resolves with the results. */
export async function runAll(plan, { log = console.log } = {}) {
  installHooks()
  const started = performance.now()
  const startFds = fdSnapshot()
  const results = []
  log(
    `fault suite: ${plan.cases.length} cases, ${plan.seed === null ? 'given case seeds' : `run seed ${plan.seed}`} (${process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`}${process.env.MCP_NATIVE_RUST_READER === '1' ? ', Rust reader' : ''})`,
  )
  for (const entry of plan.cases) {
    const r = await runCase(entry)
    results.push(r)
    log(
      `${r.failures.length === 0 ? 'ok  ' : 'FAIL'} #${r.index} seed ${r.seed} ${r.path} ${r.spec.servers.map((s) => s.kind).join('+')} (${r.ms} ms)`,
    )
    if (r.failures.length > 0) log(describeCase(r))
    else for (const n of r.notes) log(`  note: ${n}`)
  }
  const failed = results.filter((r) => r.failures.length > 0)
  const byKind = {}
  for (const r of failed) for (const f of r.failures) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1
  const endFds = fdSnapshot()
  log('')
  log(
    `fault suite summary: ${results.length} cases, ${failed.length} failed, ${Math.round((performance.now() - started) / 1000)} s, run seed ${plan.seed ?? '(given)'}`,
  )
  log(`  fds over the run: ${startFds.total} → ${endFds.total} (sockets ${startFds.sockets} → ${endFds.sockets})`)
  if (failed.length > 0) {
    log(`  failures by kind: ${JSON.stringify(byKind)}`)
    log(`  failed case seeds: ${failed.map((r) => r.seed).join(',')}`)
    log(`  again: FAULT_CASE_SEED=${failed.map((r) => r.seed).join(',')} npm run test:fault`)
  }
  const orphans = orphanProcessEvents()
  for (const e of orphans) log(`  between cases: ${e.type}: ${describeError(e.reason)}`)
  return { results, failed, orphans }
}
