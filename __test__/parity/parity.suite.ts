// Every parity scenario (npm run test:ci): bun test ./__test__/parity/parity.suite.ts
import { defineSuite } from './suite.ts'

defineSuite({ fast: false })
