/**
 * The suite's files share their worker processes (vitest.config.ts, `isolate: false`), so a file
 * that replaces a module with `vi.mock` or `vi.doMock` must run in a process of its own: listed in
 * test/isolated-files.ts. A mock in a shared process would find the module already loaded by an
 * earlier file and replace nothing (seen with verify-parse-once).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ISOLATED_TEST_FILES } from '../isolated-files.js';

const root = join(import.meta.dirname, '..', '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

describe('test isolation', () => {
  it('runs every file that mocks a module in a process of its own', () => {
    const mocking = testFiles(join(root, 'test')).filter((file) =>
      /\bvi\.(do)?mock\(/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(mocking).toContain('test/api/verify-parse-once.test.ts');
    expect(mocking.filter((file) => !ISOLATED_TEST_FILES.includes(file))).toEqual([]);
  });
});
