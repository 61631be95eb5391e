// jest for the runner smoke test only (the other tests are vitest files).
module.exports = {
  rootDir: __dirname,
  testMatch: ['<rootDir>/smoke.jest.cjs'],
  testEnvironment: 'node',
}
