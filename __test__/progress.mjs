// SPEC 3.4 (progress) checks, shared by the stdio and HTTP test files: the same behaviour must
// hold on both transports. `method` is the fixture method that reports `steps` progress
// notifications `intervalMs` apart and answers { done, token }.
import { describe, expect, it } from 'vitest'

export function describeProgress({ connect, method, timeoutMessage }) {
  describe('progress (SPEC 3.4)', () => {
    it('onProgress gets the matching notifications; the token is set in params._meta', async () => {
      const t = await connect()
      const seen = []
      const r = await t.request(method, { steps: 3 }, { onProgress: (p) => seen.push(p) })
      expect(r.done).toBe(true)
      expect(typeof r.token).toBe('number')
      expect(seen).toEqual([
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 2, total: 3, message: 'step 2' },
        { progress: 3, total: 3, message: 'step 3' },
      ])
      expect((await t.request(method, { steps: 1 })).token).toBeNull() // no progress asked: no token
    })

    it('resetTimeoutOnProgress keeps a slow but progressing request alive, up to maxTotalTimeout', async () => {
      const t = await connect()
      const slow = { steps: 6, intervalMs: 80 } // ~480 ms in all, never 80 ms without progress
      await expect(t.request(method, slow, { timeout: 200 })).rejects.toThrow(`${timeoutMessage} 200ms`)
      expect((await t.request(method, slow, { timeout: 200, resetTimeoutOnProgress: true })).done).toBe(true)
      const started = Date.now()
      const { error } = await t.request(method, slow, { timeout: 200, resetTimeoutOnProgress: true, maxTotalTimeout: 300 }).then(
        () => ({}),
        (e) => ({ error: e }),
      )
      expect(error.message).toBe(`${timeoutMessage} 300ms`)
      expect(Date.now() - started).toBeLessThan(1000)
    })
  })
}
