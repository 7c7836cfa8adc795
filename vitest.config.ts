import { randomBytes } from 'node:crypto';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Names this run's PostgreSQL schemas (test/store/store-harness.ts), dropped by the global teardown.
process.env.MAILVERDICT_TEST_RUN_ID ??= randomBytes(4).toString('hex');

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Many suites bind loopback sockets and SQLite files; two cores cannot run many at once.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          pool: 'forks',
        },
      },
      {
        // The dashboard's browser app (web/): components and hooks in a DOM, fetch faked at the edge.
        extends: true,
        plugins: [react()],
        test: {
          name: 'web',
          include: ['web/src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['web/src/test/setup.ts'],
        },
      },
    ],
  },
});
