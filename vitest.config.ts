import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

// Names this run's PostgreSQL schemas (test/store/store-harness.ts), dropped by the global teardown.
process.env.MAILVERDICT_TEST_RUN_ID ??= randomBytes(4).toString('hex');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Many suites bind loopback sockets and SQLite files; two cores cannot run many at once.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
