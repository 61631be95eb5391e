// The fault suite, quick run: a fixed list of cases of chaos servers × client paths, every one
// checked for hangs, leaks (processes, descriptors, timers, listeners), onClose accounting and
// unhandled errors (see fault/harness.mjs). The list is the case seeds that once found a bug, plus
// a fixed sample: the same cases on every run, so CI runs the same test each time. The CI count
// (200 cases of a random run seed, printed) is `npm run test:fault`; FAULT_SEED, FAULT_CASES or
// FAULT_CASE_SEED here pick other cases (a failing case names its own seed). vitest (Node) and
// `bun test` (Bun) alike.
import { describe, expect, it } from 'vitest'

import { describeCase, planRun, runCase } from './fault/harness.mjs'

/** Case seeds that found a bug (named in the commits and tests that fixed it). */
const FOUND = [2628967329, 217866463, 2276810851, 3637620965, 3829926558, 1911529015, 2515322946]
/** The fixed sample: the first cases of this run seed. */
const SAMPLE_SEED = 20261206
const SAMPLE = 13

const chosen = ['FAULT_SEED', 'FAULT_CASES', 'FAULT_CASE_SEED'].some((k) => process.env[k])
const sample = planRun({ env: { FAULT_SEED: String(SAMPLE_SEED), FAULT_CASES: String(SAMPLE) } }).cases.map((c) => c.seed)
const plan = chosen
  ? planRun({ defaultCases: 20 })
  : planRun({ env: { FAULT_PATHS: process.env.FAULT_PATHS ?? '', FAULT_CASE_SEED: [...FOUND, ...sample].join(',') } })
console.log(`fault suite: ${plan.cases.length} cases, ${plan.seed === null ? 'fixed case seeds' : `run seed ${plan.seed}`}`)

describe(`fault suite (${plan.seed === null ? 'fixed case seeds' : `run seed ${plan.seed}`})`, () => {
  for (const entry of plan.cases) {
    it(`case #${entry.index} seed ${entry.seed} ${entry.spec.path}`, async () => {
      const result = await runCase(entry)
      expect(result.failures, describeCase(result)).toEqual([])
    }, 120000)
  }
})
