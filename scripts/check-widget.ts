/**
 * The widget's budget (issue 18): dist/widget/widget.js, the one file `serve` answers at
 * /widget.js, must stay at or under 12 KB gzipped, and name no host (it derives the server's
 * address from its own script tag). `test/widget-budget.test.ts` runs it after a build;
 * `npm run bench:widget` prints the figures.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const WIDGET_BUDGET_BYTES = 12 * 1024;
export const WIDGET_FILE = fileURLToPath(new URL('../dist/widget/widget.js', import.meta.url));

export interface WidgetReport {
  bytes: number;
  /** gzip at level 9, as a server or CDN would send it. */
  gzipBytes: number;
  /** Absolute http(s) URLs written in the file (none expected). */
  urls: string[];
}

export function checkWidget(file = WIDGET_FILE): WidgetReport {
  const code = readFileSync(file);
  return {
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    urls: [...code.toString('utf8').matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]),
  };
}
