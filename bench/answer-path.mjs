// The CPU cost of small answers on the JS thread, without a server in the way (a measuring aid
// beside `npm run bench`, not one of issue 11's workloads):
//
//   node bench/answer-path.mjs [rounds, default 20000]      (or: bun bench/answer-path.mjs)
//
// Each round sends 40 `tools/call` requests through the stdio transport's native face, in groups
// of 8 as core.js sends them at 64 in flight (to a child that reads and discards its stdin, so
// that they are real pending requests with deadlines), then hands it a chunk of their 40 answers
// (~3.3 KB: a read holds 40-43 answers at 64 in flight) as its stdout reader would: `feed` (the
// chunk into Rust, its lines checked and settled, one batch text back), then the `JSON.parse` of
// that text and, per answer, the JS side's pending-map lookup. Beside it, the same chunk as the
// floor clients of bench/floor.mjs read it: their line splitter and decoding (`toString` on
// Node, `TextDecoder` on Bun), one `JSON.parse` per line and the same pending-map lookup.
// Promises are left out on both sides. Prints µs per answer (per request for `sendRequests`),
// medians of 5 passes.
import { createRequire } from 'node:module'
import { lineSplitter } from './floor.mjs'
import { median } from './rates.mjs'

const require = createRequire(import.meta.url)
const native = require('../native/index.js')

const K = 40
const ROUNDS = Number(process.argv[2] ?? 20000)
const stdio = new native.NativeStdio(() => {})
const failed = stdio.connect(JSON.stringify({ command: 'sh', args: ['-c', 'cat > /dev/null'], callerReadsStdout: true, timeout: 600000 }))
if (failed) throw new Error(failed)
stdio.takeStdoutFd() // this script reads nothing: the chunks below stand for what was read

const GROUP = 8

/** Round r's requests (texts for `sendRequests`, 8 requests each) and their answers (the chunk). */
function round(r) {
  const batches = []
  let batch = ''
  let lines = ''
  for (let id = r * K + 1; id <= (r + 1) * K; id++) {
    batch += `${id} 600000 "tools/call"{"name":"echo","arguments":{"message":"m${id}"}}\n`
    lines += `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"m${id}"}]}}\n`
    if (id % GROUP === 0) {
      batches.push(batch)
      batch = ''
    }
  }
  return { batches, chunk: Buffer.from(lines) }
}

// The JS side's pending requests (core.js's `_pending`, the floor's `Pending`), without promises.
const pending = new Map()
let answered = 0
/** @param {number} id */
function settle(id) {
  if (pending.get(id) === undefined) return
  pending.delete(id)
  answered++
}

const decoder = new TextDecoder()
const push = lineSplitter(
  (/** @type {string} */ line) => settle(JSON.parse(line).id),
  process.versions.bun ? (/** @type {Buffer} */ b) => decoder.decode(b) : (/** @type {Buffer} */ b) => b.toString(),
)

let next = 0

function pass() {
  let send = 0
  let feed = 0
  let parse = 0
  let floor = 0
  for (let r = 0; r < ROUNDS; r++) {
    // Every round's ids and texts are new (not timed), as a server's answers are.
    const { batches, chunk } = round(next++)
    const first = (next - 1) * K + 1
    for (let id = first; id < first + K; id++) pending.set(id, true)
    let t = performance.now()
    for (const batch of batches) stdio.sendRequests(batch)
    send += performance.now() - t
    t = performance.now()
    const text = stdio.feed(chunk)
    feed += performance.now() - t
    t = performance.now()
    const events = JSON.parse(/** @type {string} */ (text))
    for (const e of events) if (e[0] === 0) settle(e[1])
    parse += performance.now() - t
    if (answered !== K || events.length !== K) throw new Error(`expected ${K} answers, got ${String(text).slice(0, 200)}`)
    answered = 0
    for (let id = first; id < first + K; id++) pending.set(id, true)
    t = performance.now()
    push(chunk)
    floor += performance.now() - t
    if (answered !== K) throw new Error('the floor read fewer answers')
    answered = 0
  }
  const us = (/** @type {number} */ ms) => (ms * 1000) / (ROUNDS * K)
  return { send: us(send), feed: us(feed), parse: us(parse), floor: us(floor) }
}

pass() // warm-up
const passes = Array.from({ length: 5 }, pass)
const m = (k) => median(passes.map((p) => p[k])).toFixed(2)
console.log(
  `${process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`}, µs per answer: ` +
    `package feed ${m('feed')} + JSON.parse of its batch and lookups ${m('parse')}; ` +
    `floor (its line splitter, decode, JSON.parse per line, lookup) ${m('floor')}; sendRequests ${m('send')} per request`,
)
stdio.close()
