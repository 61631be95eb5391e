import { defineConfig } from 'vitest/config'

// The pool comes from the command line (--pool threads | forks | vmThreads).
export default defineConfig({
  test: {
    root: new URL('.', import.meta.url).pathname,
    include: ['smoke.spec.mjs'],
    testTimeout: 20000,
  },
})
