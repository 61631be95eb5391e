// The fault suite, quick run: FAULT_CASES (default 20) random cases of chaos servers × client
// paths, every one checked for hangs, leaks (processes, descriptors, timers, listeners), onClose
// accounting and unhandled errors (see fault/harness.mjs). The seed is printed; a failing case
// names its own seed: FAULT_CASE_SEED=<seed> npm run test:fault runs it again. The CI count
// (200 cases) is `npm run test:fault`. vitest (Node) and `bun test` (Bun) alike.
import { describe, expect, it } from 'vitest'

import { describeCase, planRun, runCase } from './fault/harness.mjs'

const plan = planRun({ defaultCases: 20 })
console.log(`fault suite: ${plan.cases.length} cases, run seed ${plan.seed ?? '(given case seeds)'}`)

describe(`fault suite (run seed ${plan.seed ?? 'given'})`, () => {
  for (const entry of plan.cases) {
    it(`case #${entry.index} seed ${entry.seed} ${entry.spec.path}`, async () => {
      const result = await runCase(entry)
      expect(result.failures, describeCase(result)).toEqual([])
    }, 120000)
  }
})
