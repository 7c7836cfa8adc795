/**
 * The suite's test files that need a process of their own (vitest.config.ts, project
 * `node-isolated`): they replace a module with `vi.mock`, which only works before anything in the
 * process has loaded it. Every other file shares its worker with others (`isolate: false`).
 * test/kit/isolation.test.ts checks that every file that mocks a module is listed here.
 */
export const ISOLATED_TEST_FILES = ['test/api/verify-parse-once.test.ts'];
