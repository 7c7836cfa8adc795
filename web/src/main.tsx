/**
 * The dashboard's browser entry. Stack, each picked for size and for what the pages need:
 *
 * - React 19: the expected default, and what the testing tools and the team know best.
 * - wouter (router, ~2 KB gzipped): hooks and a dozen flat routes are all the app needs;
 *   React Router's data APIs and loaders would add ~20 KB for nothing used here.
 * - TanStack Query (server state): caching, polling (usage every 10 s, running jobs every 1.5 s),
 *   mutations that invalidate what they changed (so no page needs a reload) and retries that
 *   leave 4xx answers alone. Hand-written effects would redo this badly on every page.
 * - uPlot (chart, ~20 KB gzipped): canvas, fast with many points, no dependencies; Chart.js or
 *   Recharts would cost 3-10 times as much for two line charts. Counts by verdict are plain HTML
 *   bars, readable as they are.
 * - papaparse (CSV): streams a file in chunks, so 500,000 rows are counted in a worker
 *   (lists/parse.worker.ts) without freezing the page or holding every row in memory.
 * - read-excel-file (XLSX): small and maintained; loaded by a dynamic import inside the worker,
 *   so it is not in the first page's JavaScript.
 * - Vitest with jsdom and Testing Library for component tests: the same runner as the server.
 *
 * No CSS framework, no web fonts, no CDN: one stylesheet and the system font stack; the page asks
 * nothing of any host but this service (the CSP allows nothing else).
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { AppRoot, createQueryClient, createServices } from './app';
import { workerListParser } from './lists/parser';
import './styles.css';

const client = createQueryClient();
const services = createServices(client, (input, init) => window.fetch(input, init), workerListParser);
const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <AppRoot client={client} services={services} />
  </StrictMode>,
);
