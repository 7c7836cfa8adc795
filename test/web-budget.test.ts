import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIRST_PAGE_BUDGET_BYTES, WEB_DIST, checkBundle } from '../scripts/check-bundle.js';

const built = existsSync(join(WEB_DIST, 'index.html'));
if (!built) console.log('web budget: dist/web is not built (npm run build), the built app is not measured');

describe.runIf(built)('the dashboard as built (dist/web)', () => {
  it('loads under 200 KB of gzipped JavaScript on its first page', () => {
    const report = checkBundle();
    console.log(
      `web budget: first page ${(report.gzipBytes / 1024).toFixed(1)} KB gzipped (${report.files.length} files)`,
    );
    expect(report.files.length).toBeGreaterThan(0);
    expect(report.gzipBytes).toBeLessThanOrEqual(FIRST_PAGE_BUDGET_BYTES);
  });

  it('asks nothing of any host but its own', () => {
    expect(checkBundle().foreignUrls).toEqual([]);
  });
});

describe('the budget check', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  function dist(files: Record<string, string | Buffer>): string {
    const dir = mkdtempSync(join(tmpdir(), 'web-budget-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'assets'));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  }
  // Random bytes do not compress: their gzipped size is about their size.
  const noise = (bytes: number) => `/*${randomBytes(bytes).toString('base64')}*/`;

  it('counts the entry and what it imports statically, not what it loads later', () => {
    const dir = dist({
      'index.html': '<script type="module" crossorigin src="/assets/entry.js"></script>',
      'assets/entry.js': `import{a as b}from"./vendor.js";import"./side.js";const w=()=>import("./later.js");`,
      'assets/vendor.js': `export{x as a}from"./deep.js";${noise(1000)}`,
      'assets/deep.js': noise(1000),
      'assets/side.js': noise(1000),
      'assets/later.js': noise(300_000),
    });
    const report = checkBundle(dir);
    expect(report.files.map((file) => file.path).sort()).toEqual([
      'assets/deep.js',
      'assets/entry.js',
      'assets/side.js',
      'assets/vendor.js',
    ]);
    expect(report.gzipBytes).toBeLessThan(10_000);
  });

  it('counts modulepreloaded chunks and sees a first page over the budget', () => {
    const dir = dist({
      'index.html':
        '<script type="module" src="/assets/entry.js"></script><link rel="modulepreload" href="/assets/big.js">',
      'assets/entry.js': 'console.log(1)',
      'assets/big.js': noise(210 * 1024),
    });
    expect(checkBundle(dir).gzipBytes).toBeGreaterThan(FIRST_PAGE_BUDGET_BYTES);
  });

  it('reports scripts, stylesheets and fonts from other hosts', () => {
    const dir = dist({
      'index.html':
        '<script type="module" src="/assets/entry.js"></script><link rel="stylesheet" href="/assets/app.css">' +
        '<link rel="stylesheet" href="https://fonts.example.com/css2?family=Inter">',
      'assets/entry.js': 'import"https://cdn.example.com/lib.js";',
      'assets/app.css': 'body{font-family:x}@font-face{src:url(https://fonts.example.com/x.woff2)}',
    });
    expect(checkBundle(dir).foreignUrls.sort()).toEqual([
      'https://cdn.example.com/lib.js',
      'https://fonts.example.com/css2?family=Inter',
      'https://fonts.example.com/x.woff2',
    ]);
  });
});
