// The parity suite under `bun test` (SPEC 11.7): one test per scenario, each run in the reference
// tree and in the package tree and compared (runner.mjs). A scenario passes when the two records
// are identical or differ only where scenarios.mjs declares a [fix]; the failure message lists
// what differs. A missing cache fails every test with the setup command.
import { afterAll, beforeAll, expect, test } from 'bun:test'

import { describeOutcome, prepare, runScenario, selectScenarios } from './runner.mjs'

export function defineSuite({ fast }: { fast: boolean }) {
  let env: ReturnType<typeof prepare> | undefined
  let setupError: unknown
  beforeAll(() => {
    try {
      env = prepare()
    } catch (e) {
      setupError = e
    }
  })
  afterAll(() => env?.dispose())
  for (const spec of selectScenarios({ fast })) {
    test(
      spec.name,
      async () => {
        if (!env) throw setupError
        const outcome = await runScenario(env, spec)
        if (outcome.status === 'differs') throw new Error(`${spec.name} ${describeOutcome(outcome, 12)}`)
        expect(outcome.status === 'identical' || outcome.status === 'fix').toBe(true)
      },
      2 * (spec.budgetMs ?? 20_000) + 40_000,
    )
  }
}
