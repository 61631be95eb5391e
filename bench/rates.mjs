// What the benches measure with, shared by bench/worker.mjs, bench/stdio-inflight.mjs and
// bench/http-large.mjs: the two rates, the longest main-thread block, the median.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Calls per second of `n` calls made one after another. */
export async function sequentialRate(call, n) {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await call(i)
  return n / ((performance.now() - t0) / 1000)
}

/** Calls per second of `total` calls kept `inFlight` at a time. */
export async function inFlightRate(call, total, inFlight) {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await call(next++)
    }),
  )
  return total / ((performance.now() - t0) / 1000)
}

/** The median of the finite values (NaN when there is none). */
export function median(xs) {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (!s.length) return Number.NaN
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/**
 * The longest main-thread block while `fn` runs: the largest gap between ticks of a 1 ms
 * setInterval (works alike on Node and Bun), and monitorEventLoopDelay's max as a cross-check.
 */
export async function blockDuring(fn) {
  const eld = monitorEventLoopDelay({ resolution: 1 })
  eld.enable()
  let last = performance.now()
  let max = 0
  const timer = setInterval(() => {
    const now = performance.now()
    if (now - last > max) max = now - last
    last = now
  }, 1)
  await sleep(5)
  max = 0
  last = performance.now()
  const t0 = performance.now()
  const value = await fn()
  const ms = performance.now() - t0
  const now = performance.now()
  if (now - last > max) max = now - last
  await sleep(5) // monitorEventLoopDelay records a block at its next tick
  clearInterval(timer)
  eld.disable()
  return { value, ms, block: max, eld: eld.max / 1e6 }
}
