#!/usr/bin/env node
// Proves that the fault suite can fail: for each kind of defect it must catch, plant that defect
// in the package (by patching its prototypes in this process only), run a few cases, and check
// that the suite reports it. Exits 1 if some planted defect went unnoticed.
//   node __test__/fault/selftest.mjs        (about a minute; FAULT_SEED picks other cases)
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { HttpTransport, MCPClient, StdioTransport } from 'mcp-native/compat-12.7'
import { describeCase, planRun, runCase } from './harness.mjs'

const NODE = process.versions.bun ? 'node' : process.execPath

/** Replaces `proto[name]` with `make(original)`; returns the undo. */
function patch(proto, name, make) {
  const original = proto[name]
  proto[name] = make(original)
  return () => {
    proto[name] = original
  }
}

const scenarios = [
  {
    name: 'onClose called twice by MCPClient.close()',
    expect: 'onclose',
    paths: 'client,client-reconnect',
    plant: () =>
      patch(
        MCPClient.prototype,
        'close',
        (close) =>
          async function () {
            await close.call(this)
            this.onClose?.()
          },
      ),
  },
  {
    name: 'StdioTransport.close() that never kills the server',
    expect: 'process-leak',
    paths: 'stdio-transport',
    plant: () => patch(StdioTransport.prototype, 'close', () => () => new Promise(() => {})),
  },
  {
    name: 'a timer left behind per callTool',
    expect: process.versions.bun ? null : 'timer-leak',
    paths: 'client,client-reconnect',
    plant: () =>
      patch(
        MCPClient.prototype,
        'callTool',
        (callTool) =>
          function (...a) {
            setTimeout(() => {}, 600000)
            return callTool.apply(this, a)
          },
      ),
  },
  {
    name: 'an abort listener left on the caller’s signal',
    expect: 'listener-leak',
    paths: 'stdio-transport',
    plant: () =>
      patch(
        StdioTransport.prototype,
        'request',
        (request) =>
          function (method, params, options) {
            options?.signal?.addEventListener('abort', () => {})
            return request.call(this, method, params, options)
          },
      ),
  },
  {
    name: 'a floating rejected promise',
    expect: 'unhandledRejection',
    paths: 'client,client-reconnect',
    plant: () =>
      patch(
        MCPClient.prototype,
        'callTool',
        (callTool) =>
          function (...a) {
            Promise.reject(new Error('planted floating rejection'))
            return callTool.apply(this, a)
          },
      ),
  },
  {
    name: 'answers handed to the wrong caller',
    expect: 'wrong-answer',
    paths: 'stdio-transport',
    plant: () =>
      patch(
        StdioTransport.prototype,
        'request',
        (request) =>
          function (method, params, options) {
            const p = request.call(this, method, params, options)
            return method === 'tools/call' ? p.then(() => ({ content: [{ type: 'text', text: 'someone else' }] })) : p
          },
      ),
  },
  {
    name: 'an HTTP request that never settles',
    expect: 'hang',
    paths: 'http-transport',
    plant: () =>
      patch(
        HttpTransport.prototype,
        'request',
        (request) =>
          function (method, params, options) {
            return method === 'tools/call' || method === 'ping' || method === 'tools/list'
              ? new Promise(() => {})
              : request.call(this, method, params, options)
          },
      ),
  },
  {
    name: 'a listening socket opened per stdio connect',
    expect: 'fd-leak',
    paths: 'stdio-transport',
    plant: () =>
      patch(
        StdioTransport.prototype,
        'connect',
        (connect) =>
          function (...a) {
            createServer().listen(0, '127.0.0.1').unref()
            return connect.apply(this, a)
          },
      ),
  },
  {
    name: 'a process that escapes the server’s group',
    expect: 'process-leak',
    paths: 'stdio-transport,client',
    // Planted where each path connects: a bare StdioTransport, and MCPClient (whose transport's
    // connect() is the client's, and whose server the native client starts).
    plant: () => {
      const escaping = (connect) =>
        function (...a) {
          const marker = (this.config?.args ?? []).find((x) => x.startsWith('--marker='))
          if (marker) spawn(NODE, ['-e', 'setTimeout(() => {}, 20000)', '--', marker], { detached: true, stdio: 'ignore' }).unref()
          return connect.apply(this, a)
        }
      const undo = [patch(StdioTransport.prototype, 'connect', escaping), patch(MCPClient.prototype, 'connect', escaping)]
      return () => {
        for (const u of undo) u()
      }
    },
  },
]

let missed = 0
for (const s of scenarios) {
  if (!s.expect) {
    console.log(`skip  ${s.name} (not observable on this runtime)`)
    continue
  }
  const plan = planRun({
    defaultCases: 4,
    env: { FAULT_SEED: process.env.FAULT_SEED ?? '20260101', FAULT_CASES: '4', FAULT_PATHS: s.paths },
  })
  const undo = s.plant()
  const kinds = new Set()
  let last
  try {
    for (const entry of plan.cases) {
      last = await runCase(entry)
      for (const f of last.failures) kinds.add(f.kind)
      if (kinds.has(s.expect)) break
    }
  } finally {
    undo()
  }
  const caught = kinds.has(s.expect)
  if (!caught) missed++
  console.log(`${caught ? 'caught' : 'MISSED'} ${s.name}: expected [${s.expect}], reported [${[...kinds].join(', ')}]`)
  if (!caught && last) console.log(describeCase(last))
}
console.log(missed === 0 ? 'selftest: every planted defect was caught' : `selftest: ${missed} planted defect(s) went unnoticed`)
process.exitCode = missed === 0 ? 0 : 1
