// A fault-suite case from its seed: which client path, which servers with which fault plans,
// and the workload (calls, aborts, closes at random moments). Pure: the same seed gives the same
// case, so a failure can be run again with FAULT_CASE_SEED=<seed>.
import { prng } from './prng.mjs'

/** The client paths a case can take (FAULT_PATHS=a,b restricts a run to some). */
export const PATHS = ['stdio-transport', 'http-transport', 'client', 'client-reconnect', 'function-api', 'manager']
const PATH_WEIGHTS = { 'stdio-transport': 3, 'http-transport': 3, client: 4, 'client-reconnect': 4, 'function-api': 2, manager: 4 }

const GARBAGE_KINDS = ['text', 'nonobject', 'cut', 'binary', 'stray', 'nullid', 'blank', 'weird', 'deep', 'badutf8', 'noise', 'note']

function weighted(rnd, weights) {
  const entries = Object.entries(weights)
  let total = 0
  for (const [, w] of entries) total += w
  let x = rnd.next() * total
  for (const [k, w] of entries) {
    x -= w
    if (x < 0) return k
  }
  return entries[entries.length - 1][0]
}

/** A stdio fault plan (1–4 faults) and the config fields it needs. */
function stdioFaults(rnd) {
  const f = {}
  const config = {}
  const menu = {
    exitAt: () => {
      f.exitAt = { frame: rnd.int(0, 6), fraction: rnd.next() }
      if (rnd.chance(0.3)) f.exitAt.signal = rnd.pick(['SIGKILL', 'SIGABRT'])
      else f.exitAt.code = rnd.pick([0, 1, 3, 137])
    },
    garbage: () => {
      f.garbage = { p: 0.2 + rnd.next() * 0.8, kinds: rnd.sample(GARBAGE_KINDS, rnd.int(1, 4)) }
    },
    partial: () => {
      f.partial = { p: 0.3 + rnd.next() * 0.7, pauseMs: rnd.int(0, 60) }
    },
    stall: () => {
      if (rnd.chance(0.5)) f.stallAfter = rnd.int(0, 4)
      else f.stallP = 0.1 + rnd.next() * 0.4
    },
    stderrFlood: () => {
      f.stderrFlood = {
        bytes: rnd.pick([0, 65536, 1 << 20, 4 << 20]),
        everyMs: rnd.pick([undefined, 1, 5, 20]),
        chunk: rnd.pick([512, 4096, 65536]),
      }
    },
    sigterm: () => {
      f.ignoreSigterm = rnd.chance(0.8)
      f.grandchildren = rnd.int(0, 2)
      if (rnd.chance(0.4)) f.grandchildInherits = true
    },
    freeze: () => {
      f.freezeAfterMs = rnd.int(0, 1000)
    },
    closeStdin: () => {
      f.closeStdinAfterMs = rnd.int(0, 800)
    },
    closeStdout: () => {
      f.closeStdoutAfterMs = rnd.int(0, 800)
    },
    exitAfter: () => {
      f.exitAfterMs = { ms: rnd.int(0, 1000) }
      if (rnd.chance(0.3)) f.exitAfterMs.signal = 'SIGKILL'
      else f.exitAfterMs.code = rnd.pick([0, 1, 2])
    },
    pauseStdin: () => {
      f.pauseStdinMs = rnd.int(50, 600)
    },
    init: () => {
      const which = rnd.pick(['hang', 'error', 'badVersion', 'delay'])
      if (which === 'hang') f.initHang = true
      else if (which === 'error') f.initError = true
      else if (which === 'badVersion') f.badVersion = true
      else f.initDelayMs = rnd.int(100, 2000)
    },
    answerDelay: () => {
      f.answerDelayMs = rnd.int(10, 500)
    },
    oddAnswers: () => {
      for (const k of rnd.sample(['rpcErrorP', 'dupP', 'strayIdP', 'reverseP', 'listChangedP', 'notifyFloodP'], rnd.int(1, 4)))
        f[k] = 0.1 + rnd.next() * 0.6
    },
    oversize: () => {
      config.maxMessageBytes = rnd.int(4096, 65536)
      f.oversize = { p: 0.3 + rnd.next() * 0.7, bytes: config.maxMessageBytes + rnd.int(1, 100000) }
    },
  }
  for (const k of rnd.sample(Object.keys(menu), rnd.int(1, 4))) menu[k]()
  return { faults: f, config }
}

/** A Streamable HTTP (or, for `type: "sse"`, possibly legacy) fault plan. */
function httpFaults(rnd, type) {
  const f = { sseP: rnd.pick([0, 0.3, 0.7, 1]) }
  const config = {}
  const menu = {
    burst5xx: () => {
      f.burst5xx = { from: rnd.int(0, 5), count: rnd.int(1, 4), statuses: rnd.sample([500, 502, 503, 504], rnd.int(1, 3)) }
    },
    drop: () => {
      f.dropP = 0.1 + rnd.next() * 0.3
    },
    stall: () => {
      f.stallP = 0.1 + rnd.next() * 0.3
    },
    slowHeaders: () => {
      f.slowHeaders = { p: 0.3 + rnd.next() * 0.7, ms: rnd.int(50, 1500) }
    },
    slowBody: () => {
      f.slowBody = { p: 0.3 + rnd.next() * 0.7, pauseMs: rnd.int(10, 300) }
    },
    resetSse: () => {
      f.sseP = Math.max(f.sseP, 0.7)
      f.resetSseP = 0.3 + rnd.next() * 0.7
      if (rnd.chance(0.6)) {
        f.eventIds = true
        f.retryMs = rnd.int(5, 200)
        f.resume = rnd.pick(['answer', 'answer', 'reset', 'hang', '404'])
      }
    },
    garbage: () => {
      f.garbageP = 0.2 + rnd.next() * 0.6
      f.garbageKinds = rnd.sample(['nonjson', 'ssegarbage', 'wrongtype', 'empty', 'cutjson', 'ssenoanswer'], rnd.int(1, 3))
    },
    expire: () => {
      f.expire = { after: rnd.int(0, 4), how: rnd.pick([404, 400]) }
    },
    notifyFault: () => {
      f.notifyFault = rnd.pick(['500', 'hang', 'reset'])
    },
    get: () => {
      f.get = rnd.pick(['hang', 'reset', 'close', 'notify', 'garbage', '500'])
    },
    delete: () => {
      f.delete = rnd.pick(['404', 'hang', 'reset', '500'])
    },
    exitAfter: () => {
      f.exitAfterMs = rnd.int(100, 1500)
    },
    init: () => {
      const which = rnd.pick(['error', 'badVersion', 'delay'])
      if (which === 'error') f.initError = true
      else if (which === 'badVersion') f.badVersion = true
      else f.initDelayMs = rnd.int(100, 2000)
    },
    answerDelay: () => {
      f.answerDelayMs = rnd.int(10, 500)
    },
    oddAnswers: () => {
      if (rnd.chance(0.5)) f.rpcErrorP = 0.1 + rnd.next() * 0.5
      f.reverseP = 0.2 + rnd.next() * 0.6
    },
    trickle: () => {
      f.trickleP = 0.2 + rnd.next() * 0.5
    },
    oversize: () => {
      config.maxMessageBytes = rnd.int(4096, 65536)
      f.oversize = { p: 0.3 + rnd.next() * 0.7, bytes: config.maxMessageBytes + rnd.int(1, 100000) }
    },
  }
  for (const k of rnd.sample(Object.keys(menu), rnd.int(1, 4))) menu[k]()
  if (type === 'sse' && rnd.chance(0.5)) {
    f.legacy = {}
    if (rnd.chance(0.5)) f.legacy.resetAfter = rnd.int(0, 5)
    if (rnd.chance(0.5)) f.legacy.garbageP = 0.2 + rnd.next() * 0.6
  }
  return { faults: f, config }
}

/** One server of a case: kind, timeout, kill grace, fault plan. */
function makeServer(rnd, name, kinds, path) {
  const kind = rnd.pick(kinds)
  const made = kind === 'stdio' ? stdioFaults(rnd) : httpFaults(rnd, kind)
  const reconnecting = path === 'client-reconnect' || path === 'manager'
  return {
    name,
    kind,
    timeout: rnd.int(200, 1500),
    killGraceMs: rnd.pick([0, 20, 100, 300]),
    extra: made.config,
    plan: {
      seed: rnd.seed(),
      // With reconnect, often only the first life misbehaves, so that coming back can work.
      faultyLives: reconnecting && rnd.chance(0.6) ? rnd.int(1, 2) : 0,
      faults: made.faults,
    },
  }
}

const TOOLS = ['echo', 'echo', 'slow', 'big', 'notify', 'progress']

function makeOp(rnd, path, index) {
  const op = { i: index, at: rnd.int(0, 1500) }
  const kinds =
    path === 'manager'
      ? { execute: 8, disconnectServer: 1, disconnectAll: 1, refreshAll: 1, waitForConnection: 1, connectAgain: 1 }
      : path === 'stdio-transport'
        ? { call: 8, ping: 1, list: 1, unknown: 1, notify: 1, reconnect: 1, burst: 1 }
        : path === 'http-transport'
          ? { call: 8, ping: 1, list: 1, unknown: 1, notify: 1, reconnect: 1, callMCP: 1, burst: 1 }
          : path === 'function-api'
            ? { call: 8, ping: 1, listTools: 1, refreshTools: 1, unknown: 1 }
            : { call: 8, ping: 1, listTools: 1, refreshTools: 1, unknown: 1, reconnect: 1, burst: 1 }
  op.kind = weighted(rnd, kinds)
  op.tool = rnd.pick(TOOLS)
  op.args = { ms: rnd.int(0, 1500), bytes: rnd.pick([10, 10000, 1000000]), count: rnd.int(0, 50), steps: rnd.int(1, 5) }
  // A large argument: with a server that pauses reading, stdin backpressure comes into play.
  if (rnd.chance(0.15)) op.args.pad = rnd.pick([70000, 1 << 20, 4 << 20])
  if (rnd.chance(0.5)) op.timeout = rnd.pick([0, rnd.int(1, 100), rnd.int(100, 1500)])
  if (rnd.chance(0.3)) op.abortAfter = rnd.pick([0, rnd.int(0, 50), rnd.int(0, 800)])
  else if (rnd.chance(0.25)) op.shared = true
  op.reason = rnd.pick(['default', 'error', 'string'])
  if (rnd.chance(0.3)) op.onProgress = true
  if (rnd.chance(0.2)) op.resetTimeoutOnProgress = true
  op.server = rnd.int(0, 2)
  // burst: this many calls in the same tick (one batch to Rust), all racing whatever comes.
  op.burst = rnd.pick([10, 50, 200])
  return op
}

/** The whole case for `seed`. `paths` restricts the client path (default: all). */
export function makeCase(seed, { paths = PATHS } = {}) {
  const rnd = prng(seed)
  const allowed = Object.fromEntries(Object.entries(PATH_WEIGHTS).filter(([p]) => paths.includes(p)))
  const path = weighted(rnd, Object.keys(allowed).length ? allowed : PATH_WEIGHTS)
  const kinds =
    path === 'stdio-transport' ? ['stdio'] : path === 'http-transport' ? ['http', 'http', 'sse'] : ['stdio', 'stdio', 'http', 'sse']
  const count = path === 'manager' ? rnd.int(1, 3) : 1
  const servers = Array.from({ length: count }, (_, i) => makeServer(rnd, `srv${i}${rnd.pick(['', '-x', '_y'])}`, kinds, path))
  const ops = Array.from({ length: rnd.int(1, 8) }, (_, i) => makeOp(rnd, path, i))
  const maxAt = Math.max(...ops.map((o) => o.at))
  return {
    seed,
    path,
    servers,
    ops,
    reconnect:
      path === 'client-reconnect' || (path === 'manager' && rnd.chance(0.5))
        ? { maxAttempts: rnd.int(1, 3), initialDelayMs: rnd.int(0, 100), maxDelayMs: rnd.int(50, 300) }
        : null,
    sharedAbortAt: rnd.chance(0.5) ? rnd.int(0, 1200) : null,
    sharedReason: rnd.pick(['default', 'error', 'string']),
    // A close (or disconnectAll) racing the workload, sometimes twice at once.
    closeAt: rnd.chance(0.5) ? rnd.int(0, 1500) : null,
    doubleClose: rnd.chance(0.3),
    // The final close comes after every op has started, sometimes before they are answered.
    endAt: maxAt + rnd.pick([0, rnd.int(0, 300), rnd.int(300, 2000)]),
    connectSignalAbortAt: rnd.chance(0.15) ? rnd.int(0, 300) : null,
    useCache: path === 'manager' && rnd.chance(0.4),
    listener: rnd.chance(0.5),
  }
}
