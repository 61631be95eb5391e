import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.mjs'],
    testTimeout: 30000,
    hookTimeout: 30000,
    // Process-table and timing checks are steadier one file at a time on two cores.
    fileParallelism: false,
  },
})
