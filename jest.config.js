/** Tests run against the real PostgreSQL, Redis and NATS of the machine; see test/helpers. */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { diagnostics: false }] },
  testTimeout: 60000,
  maxWorkers: 2,
};
