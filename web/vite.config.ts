/**
 * The dashboard's single-page app (web/), built into dist/web/ where `serve` finds it. `npm run
 * dev:web` serves it with hot reload and forwards the API calls to a running `mailverdict serve`
 * (MAILVERDICT_DEV_API, default http://127.0.0.1:8080).
 */
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const api = new URL(process.env.MAILVERDICT_DEV_API ?? 'http://127.0.0.1:8080').origin;
// The server refuses a state-changing request from another origin (CSRF): in development the page
// comes from Vite's port, so the proxy presents the API's own origin, as the built app would.
const toApi = { target: api, changeOrigin: true, headers: { origin: api } };

export default defineConfig({
  root: here('.'),
  base: '/',
  plugins: [react()],
  resolve: {
    alias: [
      // fflate's asynchronous unzip starts blob: workers, which the dashboard's CSP (script-src
      // 'self') forbids; the XLSX reader already runs in our own worker, so it unzips synchronously.
      { find: /^fflate$/, replacement: here('src/lists/fflate-sync.ts') },
    ],
  },
  // Module workers, so that the worker can load the XLSX reader lazily as a chunk of its own.
  worker: { format: 'es' },
  build: {
    outDir: here('../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline data: URLs for assets: everything is a file under 'self'.
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
  },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/dashboard/api': toApi,
      '/v1': toApi,
    },
  },
});
