/**
 * `npm run bench:dashboard`: a list at the batch limit through the dashboard's Lists page in
 * Debian's Chromium, against a real `serve` (test/kit/e2e.ts). Prints how long the page takes to
 * read and preview 500,000 rows, the longest main-thread task meanwhile (the page must not freeze:
 * the file is read in a Web Worker), and how long the upload takes until the job page shows.
 * Needs `npm run build` and /usr/bin/chromium.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { CHROMIUM, TEST_DOMAIN, acceptInvitation, newContext, signIn, startE2e } from '../test/kit/e2e.js';

const rowsFlag = process.argv.indexOf('--rows');
const ROWS = rowsFlag === -1 ? 500_000 : Number(process.argv[rowsFlag + 1]);

function contactsFile(dir: string): { path: string; bytes: number } {
  const lines = ['id,first_name,email,company,note'];
  for (let i = 0; i < ROWS; i++)
    lines.push(
      `${i},Name${i},person${i}@valid.${TEST_DOMAIN},Company ${i % 13},"met at fair ${i % 7}, hall B"`,
    );
  const text = lines.join('\n') + '\n';
  const path = join(dir, 'contacts.csv');
  writeFileSync(path, text);
  return { path, bytes: Buffer.byteLength(text) };
}

/** The long tasks recorded since the last call, in ms. */
function takeLongTasks(page: Page): Promise<number[]> {
  return page.evaluate<number[]>('window.longTasks.splice(0)');
}

async function main(): Promise<void> {
  const load = loadavg().map((l) => l.toFixed(1));
  console.log(`# bench:dashboard, ${new Date().toISOString()}, ${ROWS.toLocaleString('en-US')} rows`);
  console.log(`Chromium ${CHROMIUM}; Node.js ${process.version}; load average at start ${load.join(' ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-bench-dashboard-'));
  const { dashboard, browser } = await startE2e();
  try {
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
    const file = contactsFile(dir);
    const context = await newContext(browser, dashboard);
    await signIn(context, dashboard.ownerEmail);
    // Long tasks (over 50 ms on the main thread) from the first script of every page on.
    // (A string: the page's world, typed by no tsconfig of the server's.)
    await context.addInitScript(`
      window.longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
      }).observe({ type: 'longtask', buffered: true });
    `);
    const page = await context.newPage();
    await page.goto('/lists');
    await page.getByRole('heading', { name: 'Upload a list' }).waitFor();
    await takeLongTasks(page);

    // A path, not a buffer: Chromium reads the file itself, as it does for a user's pick.
    const readStart = performance.now();
    await page.getByLabel('Choose a file').setInputFiles(file.path);
    await page
      .getByRole('definition')
      .getByText(ROWS.toLocaleString('en-US'), { exact: true })
      .first()
      .waitFor({ timeout: 120_000 });
    await page.getByRole('table', { name: /Preview/ }).waitFor();
    const readMs = performance.now() - readStart;
    const readTasks = await takeLongTasks(page);

    await page.getByRole('radio', { name: 'Test' }).check();
    const uploadStart = performance.now();
    const accepted = page.waitForResponse(
      (res) => res.url().includes('/dashboard/api/lists') && res.request().method() === 'POST',
      { timeout: 120_000 },
    );
    await page.getByRole('button', { name: 'Start test job' }).click();
    const acceptedStatus = (await accepted).status();
    const acceptedMs = performance.now() - uploadStart;
    await page.getByRole('progressbar', { name: /Progress of/ }).waitFor({ timeout: 120_000 });
    const uploadMs = performance.now() - uploadStart;
    const uploadTasks = await takeLongTasks(page);

    const longest = (tasks: number[]) => (tasks.length === 0 ? 0 : Math.max(...tasks));
    console.log('');
    console.log('| step | time (s) | main-thread tasks over 50 ms | longest task (ms) |');
    console.log('|---|---:|---:|---:|');
    console.log(
      `| read and preview ${ROWS.toLocaleString('en-US')} rows (${(file.bytes / 2 ** 20).toFixed(1)} MiB) | ${(readMs / 1000).toFixed(2)} | ${readTasks.length} | ${longest(readTasks).toFixed(0)} |`,
    );
    console.log(`| upload until the server's ${acceptedStatus} | ${(acceptedMs / 1000).toFixed(2)} | | |`);
    console.log(
      `| upload until the job page shows | ${(uploadMs / 1000).toFixed(2)} | ${uploadTasks.length} | ${longest(uploadTasks).toFixed(0)} |`,
    );
    console.log(
      `\nload average at end ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    await context.close();
  } finally {
    await browser.close();
    await dashboard.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
