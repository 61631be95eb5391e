// A small seeded PRNG for the fault suite: the same seed gives the same plan, in the runner and in
// the chaos server alike. mulberry32 (32-bit state): plenty for picking faults, and tiny.

/** A generator over `seed` (any integer; taken modulo 2^32). */
export function prng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const r = {
    /** A float in [0, 1). */
    next,
    /** An integer in [lo, hi] (both included). */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    /** True with probability `p`. */
    chance: (p) => next() < p,
    /** One element of `items`. */
    pick: (items) => items[Math.floor(next() * items.length)],
    /** `k` distinct elements of `items`, in random order. */
    sample: (items, k) => {
      const copy = [...items]
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1))
        ;[copy[i], copy[j]] = [copy[j], copy[i]]
      }
      return copy.slice(0, Math.max(0, Math.min(k, copy.length)))
    },
    /** A new 32-bit seed (for a sub-generator). */
    seed: () => Math.floor(next() * 4294967296) >>> 0,
  }
  return r
}

/** The seed of case `index` of a run seeded with `runSeed` (a well-mixed 32-bit value). */
export function caseSeed(runSeed, index) {
  let h = (runSeed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

/** A random 32-bit seed (for runs without FAULT_SEED). */
export function randomSeed() {
  return Math.floor(Math.random() * 4294967296) >>> 0
}
