/**
 * The dashboard's first-page budget (issue 9): the JavaScript that dist/web/index.html loads
 * before anything else — its module scripts, their modulepreloads and every chunk they import
 * statically — must stay under 200 KB gzipped. Chunks loaded later by a dynamic import (the list
 * parser's worker, the XLSX reader) do not count. Also checks that the page asks nothing of any
 * other host (no CDN script, stylesheet or font). `test/web-budget.test.ts` runs it after a build;
 * `node --import tsx scripts/check-bundle.ts` prints the figures.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const FIRST_PAGE_BUDGET_BYTES = 200 * 1024;
export const WEB_DIST = fileURLToPath(new URL('../dist/web', import.meta.url));

export interface BundleReport {
  /** The JavaScript files the first page loads, with their gzipped sizes. */
  files: { path: string; bytes: number; gzipBytes: number }[];
  gzipBytes: number;
  /** URLs of other hosts the page or its stylesheets would fetch. */
  foreignUrls: string[];
}

const attr = (tag: string, name: string) =>
  new RegExp(`\\b${name}\\s*=\\s*["']([^"']+)["']`, 'i').exec(tag)?.[1];

/** Static imports of a module: `import … from "x"`, `import "x"`, `export … from "x"` (not `import("x")`). */
function staticImports(code: string): string[] {
  const found: string[] = [];
  const pattern = /(?:^|[;\s}])(?:import|export)\s*(?:[\w$*{}\s,]*?\s*from\s*)?["'`]([^"'`]+)["'`]/g;
  for (const match of code.matchAll(pattern)) if (match[1]) found.push(match[1]);
  return found;
}

export function checkBundle(dist = WEB_DIST): BundleReport {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const entries: string[] = [];
  const foreignUrls: string[] = [];
  for (const [tag] of html.matchAll(/<(script|link)\b[^>]*>/gi)) {
    const url = attr(tag, 'src') ?? attr(tag, 'href');
    if (!url) continue;
    if (/^(https?:)?\/\//i.test(url)) foreignUrls.push(url);
    const isModule = /^<script/i.test(tag) && /type\s*=\s*["']module["']/i.test(tag);
    const isPreload = /rel\s*=\s*["']modulepreload["']/i.test(tag);
    if (isModule || isPreload) entries.push(join(dist, url.replace(/^\//, '')));
    if (/rel\s*=\s*["']stylesheet["']/i.test(tag) && !/^(https?:)?\/\//i.test(url)) {
      const css = readFileSync(join(dist, url.replace(/^\//, '')), 'utf8');
      for (const match of css.matchAll(/(?:url\(\s*["']?|@import\s+["'])((?:https?:)?\/\/[^"')\s]+)/gi)) {
        if (match[1]) foreignUrls.push(match[1]);
      }
    }
  }
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = normalize(queue.shift() as string);
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of staticImports(readFileSync(file, 'utf8'))) {
      if (/^(https?:)?\/\//i.test(specifier)) foreignUrls.push(specifier);
      else if (specifier.startsWith('.')) queue.push(join(dirname(file), specifier));
      else if (specifier.startsWith('/')) queue.push(join(dist, specifier.slice(1)));
    }
  }
  const files = [...seen].map((file) => {
    const content = readFileSync(file);
    return {
      path: relative(dist, file),
      bytes: content.length,
      gzipBytes: gzipSync(content, { level: 9 }).length,
    };
  });
  return { files, gzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0), foreignUrls };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === normalize(process.argv[1])) {
  if (!existsSync(join(WEB_DIST, 'index.html'))) {
    console.error('dist/web/index.html is missing: run `npm run build` first.');
    process.exit(1);
  }
  const report = checkBundle();
  for (const file of report.files) {
    console.log(
      `${file.path}  ${(file.bytes / 1024).toFixed(1)} KB, ${(file.gzipBytes / 1024).toFixed(1)} KB gzipped`,
    );
  }
  const verdict = report.gzipBytes <= FIRST_PAGE_BUDGET_BYTES ? 'within' : 'OVER';
  console.log(
    `first page: ${(report.gzipBytes / 1024).toFixed(1)} KB gzipped, ${verdict} the ${FIRST_PAGE_BUDGET_BYTES / 1024} KB budget`,
  );
  if (report.foreignUrls.length > 0) console.log(`requests to other hosts: ${report.foreignUrls.join(', ')}`);
  process.exit(verdict === 'within' && report.foreignUrls.length === 0 ? 0 : 1);
}
