/**
 * Which way the test and bench files may import each other: benches use kits (test/kit/,
 * bench/kit/), never test files; tests never use bench files; and the kits of test/kit/ build only
 * on each other (and the sources), so that what a bench pulls in through them is a kit too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Relative specifiers a file imports: static and dynamic imports, re-exports, `new URL('./x.ts')`. */
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\bnew URL\(\s*)(['"])(\.{1,2}\/[^'"]*)\1/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** Every repository path `file` imports, as `from -> to` pairs. */
function imports(file: string): { from: string; to: string }[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(SPECIFIER)].map((match) => ({
    from: file,
    to: relative(ROOT, resolve(ROOT, dirname(file), match[2]!)),
  }));
}

const testImports = sourceFiles('test').flatMap(imports);
const benchImports = sourceFiles('bench').flatMap(imports);
const inside = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

describe('kit imports', () => {
  it('finds the imports it checks', () => {
    expect(testImports.some(({ to }) => to === 'test/kit/dns-server.js')).toBe(true);
    expect(benchImports.some(({ to }) => inside(to, 'test/kit'))).toBe(true);
  });

  it('tests never import a bench file', () => {
    expect(testImports.filter(({ to }) => inside(to, 'bench'))).toEqual([]);
  });

  it('benches import kits (test/kit/, bench/), never a test file', () => {
    expect(benchImports.filter(({ to }) => inside(to, 'test') && !inside(to, 'test/kit'))).toEqual([]);
  });

  it('the kits of test/kit/ import only each other', () => {
    const kits = testImports.filter(({ from }) => inside(from, 'test/kit') && !from.endsWith('.test.ts'));
    expect(kits.filter(({ to }) => inside(to, 'test') && !inside(to, 'test/kit'))).toEqual([]);
  });
});
