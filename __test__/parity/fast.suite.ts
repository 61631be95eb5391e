// The quick part of the parity suite (npm test): bun test ./__test__/parity/fast.suite.ts
import { defineSuite } from './suite.ts'

defineSuite({ fast: true })
