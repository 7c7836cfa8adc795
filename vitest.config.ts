import { randomBytes } from 'node:crypto';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { ISOLATED_TEST_FILES } from './test/isolated-files.js';

// Names this run's PostgreSQL schemas (test/kit/store-harness.ts), dropped by the global teardown.
process.env.MAILVERDICT_TEST_RUN_ID ??= randomBytes(4).toString('hex');

/** Test files that need a process of their own (they mock a module that others load first). */
const ISOLATED = ISOLATED_TEST_FILES;

export default defineConfig({
  test: {
    // Generous: a suite that spawns the CLI through tsx pays 2-9 s of start-up per process on two
    // busy cores (seen at 12-14 s for a test with two spawns during a CI run). A hang still fails.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits up to 30 s, not its default second: a wait for an event is bounded well
    // inside the test's own time, never by a margin a loaded machine overruns (a never still fails).
    expect: { poll: { timeout: 30_000 } },
    // Many suites bind loopback sockets and SQLite files; two cores cannot run many at once.
    maxWorkers: 2,
    // Password hashes at 2^10 in the `serve` processes tests start (test/kit/password-cost.setup.ts
    // does the same in the test processes).
    env: { MAILVERDICT_PASSWORD_HASH_COST: '10' },
    // MAILVERDICT_TEST_REPORT=FILE also writes the JSON report there (.ci/run prints the slowest
    // files from it); `npm test` takes no reporter flags of its own (run-p runs it).
    reporters: process.env.MAILVERDICT_TEST_REPORT ? ['default', 'json'] : ['default'],
    ...(process.env.MAILVERDICT_TEST_REPORT
      ? { outputFile: { json: process.env.MAILVERDICT_TEST_REPORT } }
      : {}),
    projects: [
      {
        // The suite's own tests, several files to each worker process, one after the other, without
        // loading the modules again for each file (`isolate: false`): every test builds its own
        // runtime, stores, servers and clocks, and the modules keep no state a test relies on.
        // Isolating each file cost about 0.5 s of CPU per file (a process and its imports),
        // nearly half the suite's CPU on two cores (docs/benchmarks.md, "CI").
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/kit/password-cost.setup.ts'],
          pool: 'forks',
          isolate: false,
        },
      },
      {
        // Files that replace a module (`vi.mock`): in a fresh process each, before anything loads it.
        extends: true,
        test: {
          name: 'node-isolated',
          include: ISOLATED,
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/kit/password-cost.setup.ts'],
          pool: 'forks',
        },
      },
      {
        // The TypeScript client (clients/typescript) against a real `serve` (its test/client-kit.ts).
        extends: true,
        test: {
          name: 'client',
          include: ['clients/typescript/test/**/*.test.ts'],
          setupFiles: ['test/kit/password-cost.setup.ts'],
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
