// vitest, in each pool the agent may use (threads, forks, vmThreads): `npm run test:runners`.
import { createRequire } from 'node:module'
import { expect, it } from 'vitest'

import * as pkg from 'mcp-native/compat-12.7'

const require = createRequire(import.meta.url)
const { smoke } = require('./smoke.cjs')

it('connect, list, call, disconnect through the manager', { timeout: 20000 }, async () => {
  const out = await smoke(pkg)
  expect(out).toEqual({ connected: ['smoke'], toolCount: 6, text: 'hello from the runner', isTool: true })
})
