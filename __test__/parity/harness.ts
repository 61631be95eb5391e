// What a parity scenario gets (SPEC 11.7): the tree it runs in, the package's fixture servers, a
// recording HTTP proxy, deadlines, and the normalisation of its record. Runs inside the scenario's
// own Bun process (host.ts), once per tree; only 127.0.0.1 is ever contacted.
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { join } from 'node:path'

export const REPO = join(import.meta.dir, '..', '..')
export const STDIO_FIXTURE = join(REPO, '__test__', 'fixture', 'server.mjs')
export const HTTP_FIXTURE = join(REPO, '__test__', 'fixture', 'http-server.mjs')
/** The fixture servers run on the machine's Node (as helpers.mjs runs them under Bun). */
export const NODE = Bun.which('node') ?? 'node'

export type Side = 'reference' | 'package'
/**
 * A value of an agent module or the package, imported by path at run time (its types are the
 * agent's, which this repository does not hold): the scenarios read it as the agent's code does.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Agent = any
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** One request an HTTP server received through the recording proxy. */
export interface HttpFrame {
  method: string
  path: string
  headers: Record<string, string>
  body: unknown
  status?: number
  contentType?: string
}

/** What a proxy's gate answers in the server's place. */
export interface GateAnswer {
  status: number
  headers?: Record<string, string>
  body?: string
}

/** Header names the record keeps (others carry lengths, hosts, runtimes' user agents). */
const KEPT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id', 'authorization', 'x-parity']

export class Ctx {
  readonly tree = required('PARITY_TREE')
  readonly side = required('PARITY_SIDE') as Side
  /** This side's temporary root (normalised to `<tmp>`); the project dir is `<tmp>/project`. */
  readonly tmp = required('PARITY_TMP')
  readonly project = process.cwd()
  /** Lets the runner find and end every fixture process this scenario started. */
  readonly marker = `--marker=${required('PARITY_MARKER')}`
  readonly events: Json[] = []
  readonly #cleanups: Array<() => unknown> = []
  readonly #t0 = performance.now()

  /** Imports an agent module of this tree, e.g. `mcp/manager.ts`. */
  mod<T = Agent>(rel: string): Promise<T> {
    return import(join(this.tree, 'src', rel))
  }

  /** A stdio config for the package's fixture server. */
  stdio(flags: string[] = [], extra: Record<string, unknown> = {}): Record<string, Agent> {
    return { command: NODE, args: [STDIO_FIXTURE, this.marker, ...flags], ...extra }
  }

  /** Records an event, in order. */
  event(label: string, data?: unknown): void {
    this.events.push(data === undefined ? label : { [label]: toJson(data) })
  }

  /** Milliseconds since the scenario started. */
  elapsed(): number {
    return performance.now() - this.#t0
  }

  /** Runs `fn` at cleanup (last registered first). */
  defer(fn: () => unknown): void {
    this.#cleanups.push(fn)
  }

  async cleanup(): Promise<void> {
    for (const fn of this.#cleanups.splice(0).reverse()) {
      try {
        await within('cleanup', 5000, Promise.resolve().then(fn))
      } catch {
        // the runner kills what is left
      }
    }
  }

  within<T>(label: string, ms: number, promise: Promise<T>): Promise<T> {
    return within(label, ms, promise)
  }

  /** Polls `predicate` every 10 ms until it holds (a wait with a deadline, not a sleep). */
  async waitFor<T>(label: string, predicate: () => T | Promise<T>, ms = 5000): Promise<T> {
    const deadline = performance.now() + ms
    for (;;) {
      const value = await predicate()
      if (value) return value
      if (performance.now() > deadline) throw new Error(`waitFor ${label}: not within ${ms} ms`)
      await Bun.sleep(10)
    }
  }

  /** The HTTP fixture on 127.0.0.1:0: its base URL; stopped at cleanup. */
  async httpFixture(flags: string[] = []): Promise<{ base: string; child: ChildProcess }> {
    const child = spawn(NODE, [HTTP_FIXTURE, this.marker, ...flags], { stdio: ['pipe', 'pipe', 'pipe'] })
    this.defer(() => child.kill('SIGKILL'))
    child.stderr?.on('data', () => {})
    const port = await within(
      'http fixture start',
      10_000,
      new Promise<number>((resolve, reject) => {
        child.once('error', reject)
        child.stdout?.once('data', (d) => resolve(JSON.parse(String(d)).port))
      }),
    )
    return { base: `http://127.0.0.1:${port}`, child }
  }

  /**
   * A recording proxy on 127.0.0.1:0 in front of `target`: every request it receives is kept
   * (method, path, the headers of KEPT_HEADERS, the JSON body) with the status of the answer.
   * `gate` may answer a request itself (an auth check, a redirect) instead of forwarding it.
   */
  async proxy(
    target: string,
    options: { gate?: (frame: HttpFrame) => GateAnswer | undefined } = {},
  ): Promise<{ base: string; frames: HttpFrame[] }> {
    const frames: HttpFrame[] = []
    const server: Server = createServer(async (req, res) => {
      const body = await readBody(req)
      const frame: HttpFrame = { method: req.method ?? '', path: req.url ?? '', headers: {}, body: parseBody(body) }
      for (const name of KEPT_HEADERS) {
        const v = req.headers[name]
        if (v !== undefined) frame.headers[name] = Array.isArray(v) ? v.join(', ') : v
      }
      frames.push(frame)
      const gated = options.gate?.(frame)
      if (gated) {
        frame.status = gated.status
        res.writeHead(gated.status, gated.headers ?? {})
        res.end(gated.body ?? '')
        return
      }
      const controller = new AbortController()
      res.on('close', () => controller.abort())
      try {
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.headers)) {
          if (v === undefined || k === 'host' || k === 'content-length' || k === 'connection') continue
          headers[k] = Array.isArray(v) ? v.join(', ') : v
        }
        const answer = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers,
          body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
          signal: controller.signal,
        })
        frame.status = answer.status
        frame.contentType = answer.headers.get('content-type') ?? undefined
        const out: Record<string, string> = {}
        answer.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection' && k !== 'content-encoding') out[k] = v
        })
        res.writeHead(answer.status, out)
        if (answer.body) for await (const chunk of answer.body) res.write(chunk)
        res.end()
      } catch {
        if (!res.headersSent) res.writeHead(502)
        res.end()
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    this.defer(() => {
      server.closeAllConnections?.()
      server.close()
    })
    const address = server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    return { base: `http://127.0.0.1:${port}`, frames }
  }
}

function required(name: string): string {
  const v = process.env[name]
  if (!v) throw new Error(`${name} is not set: scenarios run through __test__/parity/host.ts`)
  return v
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function parseBody(text: string): unknown {
  if (text === '') return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Rejects with `<label>: no answer within <ms> ms` when `promise` takes longer. */
export function within<T>(label: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/** Settles to `{ value }` or `{ error }` (described), never throws. */
export async function settle<T>(promise: Promise<T>): Promise<{ value: T } | { error: Json }> {
  try {
    return { value: await promise }
  } catch (error) {
    return { error: describeError(error) }
  }
}

/** An error as the record keeps it: its class name, name, message, code and the extra fields asked for. */
export function describeError(error: unknown, fields: string[] = []): Json {
  if (!(error instanceof Error)) return { thrown: toJson(error) }
  const e = error as Error & Record<string, unknown>
  const out: Record<string, Json> = { class: error.constructor?.name ?? null, name: error.name, message: error.message }
  if (e.code !== undefined) out.code = toJson(e.code)
  for (const f of fields) if (e[f] !== undefined) out[f] = toJson(e[f])
  return out
}

/** The properties of an agent tool object the agent reads (tool objects of `getTools()`, `MCPTool`, `DeferredMCPTool`). */
export function describeTool(tool: Agent): Json {
  return toJson({
    class: tool?.constructor?.name,
    name: tool.name,
    legacyName: tool.legacyName,
    label: tool.label,
    description: tool.description,
    parameters: tool.parameters,
    mcpToolName: tool.mcpToolName,
    mcpServerName: tool.mcpServerName,
    approval: tool.approval,
    strict: tool.strict,
    mergeCallAndResult: tool.mergeCallAndResult,
    hidden: tool.hidden,
    execute: typeof tool.execute,
    renderCall: typeof tool.renderCall,
    renderResult: typeof tool.renderResult,
  })
}

/** A tool result as the agent reads it (content blocks, details, isError). */
export function describeResult(result: Agent): Json {
  return toJson(result)
}

/**
 * The frames a stdio fixture received, through its `requests` and `received` methods: request
 * ids replaced by `#<n>` in order of first appearance (with their JSON type), so that
 * id schemes may differ; the query itself is the last request.
 */
export async function stdioFrames(transport: Agent, ms = 5000): Promise<Json> {
  const { requests } = await within('requests', ms, transport.request('requests', {}))
  const { received } = await within('received', ms, transport.request('received', {}))
  return { requests: renumber(requests), notifications: toJson(received) }
}

/** Request ids by order of first appearance (`#1`, `#2`, …) with their JSON types. */
export function renumber(requests: Array<{ id: unknown; method: string; params?: unknown }>): Json {
  const seen = new Map<unknown, string>()
  return requests.map((r) => {
    if (!seen.has(r.id)) seen.set(r.id, `#${seen.size + 1}`)
    return toJson({ id: seen.get(r.id), idType: typeof r.id, method: r.method, params: r.params })
  })
}

/** HTTP frames with JSON-RPC ids renumbered as renumber() does, and session ids by order. */
export function httpFrames(frames: HttpFrame[]): Json {
  const ids = new Map<unknown, string>()
  const sessions = new Map<string, string>()
  const id = (v: unknown) => {
    if (!ids.has(v)) ids.set(v, `#${ids.size + 1}`)
    return ids.get(v)
  }
  return frames.map((f) => {
    const headers = { ...f.headers }
    const sid = headers['mcp-session-id']
    if (sid !== undefined) {
      if (!sessions.has(sid)) sessions.set(sid, `session-${sessions.size + 1}`)
      headers['mcp-session-id'] = sessions.get(sid) as string
    }
    let body = f.body as Agent
    if (body && typeof body === 'object' && !Array.isArray(body) && 'id' in body)
      body = { ...body, id: id(body.id), idType: typeof body.id }
    return toJson({ ...f, headers, body })
  })
}

/** JSON as the record compares it: `undefined` members dropped, functions and symbols named, errors described. */
export function toJson(value: unknown): Json {
  const seen = new WeakSet<object>()
  const conv = (v: unknown): Json | undefined => {
    if (v === null) return null
    if (v instanceof Error) return describeError(v)
    switch (typeof v) {
      case 'undefined':
        return undefined
      case 'function':
        return '[function]'
      case 'symbol':
        return undefined
      case 'bigint':
        return `${v}n`
      case 'number':
        return Number.isFinite(v) ? v : String(v)
      case 'string':
      case 'boolean':
        return v
    }
    const o = v as object
    if (seen.has(o)) return '[circular]'
    seen.add(o)
    try {
      if (Array.isArray(o)) return o.map((x) => conv(x) ?? null)
      if (o instanceof Map) return { '[Map]': [...o].map(([k, x]) => [conv(k) ?? null, conv(x) ?? null]) }
      if (o instanceof Set) return { '[Set]': [...o].map((x) => conv(x) ?? null) }
      if (typeof (o as { toJSON?: unknown }).toJSON === 'function') return conv((o as { toJSON(): unknown }).toJSON())
      const out: Record<string, Json> = {}
      for (const k of Object.keys(o)) {
        const x = conv((o as Record<string, unknown>)[k])
        if (x !== undefined) out[k] = x
      }
      return out
    } finally {
      seen.delete(o)
    }
  }
  return conv(value) ?? null
}

/** Replaces what differs between runs and trees: paths, ports, the Node binary. */
export function normalizeRecord(value: Json, ctx: Ctx): Json {
  const replacements: Array<[string | RegExp, string]> = [
    [ctx.marker.slice('--marker='.length), '<marker>'],
    [ctx.tree, '<tree>'],
    [ctx.tmp, '<tmp>'],
    [REPO, '<repo>'],
    [NODE, '<node>'],
    [/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>'],
    [/localhost:\d+/g, 'localhost:<port>'],
  ]
  const fix = (s: string) => {
    let out = s
    for (const [from, to] of replacements) out = typeof from === 'string' ? out.split(from).join(to) : out.replace(from, to)
    return out
  }
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return fix(v)
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') {
      const out: Record<string, Json> = {}
      for (const [k, x] of Object.entries(v)) out[fix(k)] = walk(x)
      return out
    }
    return v
  }
  return walk(value)
}

/**
 * Status events of servers that connect concurrently: the first event, the count, and each
 * server's own sequence (the order across servers is the servers' timing, not compared).
 */
export function groupEvents(events: unknown[]): Json {
  const out: Record<string, unknown[]> = {}
  for (const e of events as Array<{ serverName?: string; serverNames?: string[] }>) {
    for (const name of e?.serverNames ?? [e?.serverName ?? '?']) (out[name] ??= []).push(e)
  }
  return toJson({ first: events[0], count: events.length, byServer: out })
}

/**
 * The agent's credential storage as its oauth-credentials.ts reads it (`credentials.get/list`,
 * `oauth.refreshStored`), holding `initial` (credential id → credential). What a refresh issues
 * is the scenario's: a new `tok-<n>` when the credential is due (expired or within 5 minutes) or
 * the refresh is forced, unless `frozen`; every refresh is recorded per credential.
 */
export function agentAuthStorage(initial: Record<string, Agent>) {
  const credentials = new Map<string, Agent>(Object.entries(initial))
  const refreshes: Record<string, unknown[]> = {}
  const state = { issued: 1, frozen: false }
  const storage = {
    credentials: {
      get: (id: string) => credentials.get(id),
      list: (provider: string) => (credentials.has(provider) ? [{ id: 7, credential: credentials.get(provider) }] : []),
    },
    oauth: {
      refreshStored: async (provider: string, opts: Agent) => {
        ;(refreshes[provider] ??= []).push({
          credentialId: opts?.credentialId ?? null,
          forceRefresh: opts?.forceRefresh ?? null,
          keep: opts?.keepCredentialOnRefreshFailure ?? null,
        })
        const current = credentials.get(provider)
        const due = opts?.forceRefresh || current.expires < Date.now() + 5 * 60_000
        if (!due || state.frozen) return { credential: current, refreshed: false, removed: false }
        const next = { ...current, access: `tok-${state.issued++}`, expires: Date.now() + 3_600_000 }
        credentials.set(provider, next)
        return { credential: next, refreshed: true, removed: false }
      },
    },
  }
  return { storage, credentials, refreshes, state }
}

/** What a scenario module exports. */
export interface Scenario {
  default(ctx: Ctx): Promise<unknown>
}
