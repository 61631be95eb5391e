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
      // ~800 ms in all, a step every 80 ms. The deadlines do not lean on the machine's speed: a
      // busy machine only makes the server slower, so 400 ms (and 600 ms) still come before its
      // end; the one margin is a step's gap against 400 ms (5×).
      const slow = { steps: 10, intervalMs: 80 }
      await expect(t.request(method, slow, { timeout: 400 })).rejects.toThrow(`${timeoutMessage} 400ms`)
      expect((await t.request(method, slow, { timeout: 400, resetTimeoutOnProgress: true })).done).toBe(true)
      const { error } = await t.request(method, slow, { timeout: 400, resetTimeoutOnProgress: true, maxTotalTimeout: 600 }).then(
        () => ({}),
        (e) => ({ error: e }),
      )
      expect(error.message).toBe(`${timeoutMessage} 600ms`)
    })
  })
}
