// The two rates every bench measures, shared by bench/worker.mjs and bench/stdio-inflight.mjs.
import { performance } from 'node:perf_hooks'

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
