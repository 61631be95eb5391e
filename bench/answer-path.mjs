// The CPU cost of small answers on the JS thread, without a server in the way (a measuring aid
// beside `npm run bench`, not one of issue 11's workloads):
//
//   node bench/answer-path.mjs [rounds, default 20000]      (or: bun bench/answer-path.mjs)
//
// Each round sends 40 `tools/call` requests through the stdio transport's native face (to a
// child that reads and discards its stdin, so that they are real pending requests with
// deadlines), then hands it a chunk of their 40 answers (~3.3 KB, the size a read holds at 64
// in flight) as its stdout reader would: `feed` (the chunk into Rust, its lines checked and
// settled, one batch text back) and the `JSON.parse` of that text. Beside it, the same chunk as
// the floor clients of bench/floor.mjs read it: newline search, `TextDecoder`, one `JSON.parse`
// per line. Prints µs per answer (per request for `sendRequests`), medians of 5 passes.
import { createRequire } from 'node:module'
import { median } from './rates.mjs'

const require = createRequire(import.meta.url)
const native = require('../native.js')

const K = 40
const ROUNDS = Number(process.argv[2] ?? 20000)
const stdio = new native.NativeStdio(() => {})
const failed = stdio.connect(JSON.stringify({ command: 'sh', args: ['-c', 'cat > /dev/null'], callerReadsStdout: true, timeout: 600000 }))
if (failed) throw new Error(failed)
stdio.takeStdoutFd() // this script reads nothing: the chunks below stand for what was read

/** Round r's requests (a batch text for `sendRequests`) and their answers (the chunk read). */
function round(r) {
  let batch = ''
  let lines = ''
  for (let id = r * K + 1; id <= (r + 1) * K; id++) {
    batch += `${id} 600000 "tools/call"{"name":"echo","arguments":{"message":"m${id}"}}\n`
    lines += `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"m${id}"}]}}\n`
  }
  return { batch, chunk: Buffer.from(lines) }
}
const decoder = new TextDecoder()

/** The floor's reading of one chunk; returns the answers found. */
function floorRead(buf) {
  let start = 0
  let nl
  let n = 0
  while ((nl = buf.indexOf(10, start)) !== -1) {
    if (JSON.parse(decoder.decode(buf.subarray(start, nl))).id !== undefined) n++
    start = nl + 1
  }
  return n
}

let next = 0

function pass() {
  let send = 0
  let feed = 0
  let parse = 0
  let floor = 0
  for (let r = 0; r < ROUNDS; r++) {
    // Every round's ids and texts are new (not timed), as a server's answers are.
    const { batch, chunk } = round(next++)
    let t = performance.now()
    stdio.sendRequests(batch)
    send += performance.now() - t
    t = performance.now()
    const text = stdio.feed(chunk)
    feed += performance.now() - t
    t = performance.now()
    const events = JSON.parse(/** @type {string} */ (text))
    parse += performance.now() - t
    if (events.length !== K) throw new Error(`expected ${K} answers, got ${String(text).slice(0, 200)}`)
    t = performance.now()
    if (floorRead(chunk) !== K) throw new Error('the floor read fewer answers')
    floor += performance.now() - t
  }
  const us = (ms) => (ms * 1000) / (ROUNDS * K)
  return { send: us(send), feed: us(feed), parse: us(parse), floor: us(floor) }
}

pass() // warm-up
const passes = Array.from({ length: 5 }, pass)
const m = (k) => median(passes.map((p) => p[k])).toFixed(2)
console.log(
  `${process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`}, µs per answer: ` +
    `package feed ${m('feed')} + JSON.parse of its batch ${m('parse')}; ` +
    `floor (newline search, decode, JSON.parse per line) ${m('floor')}; sendRequests ${m('send')} per request`,
)
stdio.close()
