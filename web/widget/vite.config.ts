/**
 * The signup-form widget (web/widget/widget.ts) as one classic script, dist/widget/widget.js,
 * which `serve` answers at /widget.js (docs/widget.md). Kept under 12 KB gzipped
 * (test/widget-budget.test.ts).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  publicDir: false,
  build: {
    outDir: here('../../dist/widget'),
    emptyOutDir: true,
    target: 'es2020',
    sourcemap: false,
    lib: {
      entry: here('widget.ts'),
      formats: ['iife'],
      name: 'mailverdictWidget',
      fileName: () => 'widget.js',
    },
  },
});
