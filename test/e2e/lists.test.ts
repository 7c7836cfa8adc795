/**
 * Cleaning a list and watching usage, end to end: a CSV of 1,000 rows with other columns goes
 * through the upload page into a test-mode job (fixed results by domain, so it finishes quickly
 * and its verdicts are known), its progress fills the card and its counts show, and the
 * deliverable rows (the "safe to send" preset) come back with their other columns intact, as CSV
 * and as XLSX; the sidebar's column reaches the foot of the long list page; axe-core finds
 * nothing serious on the list page or the overview. Live verifications (against the in-process
 * DNS server) move the overview's gauge and daily chart without a reload.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { readSheet } from 'read-excel-file/node';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  NXDOMAIN,
  TEST_DOMAIN,
  acceptInvitation,
  callApi,
  describeViolations,
  newContext,
  seriousViolations,
  signIn,
  skipE2e,
  startE2e,
  type Dashboard,
} from '../kit/e2e.js';

const ROWS = 1_000;
const DOMAINS = [
  `valid.${TEST_DOMAIN}`,
  `invalid.${TEST_DOMAIN}`,
  `disposable.${TEST_DOMAIN}`,
  'elsewhere.test',
];

/**
 * id, first name, e-mail (third column, for the page to detect), company, note: a note with a
 * comma and quotes, and on some rows a cell a spreadsheet would read as a formula.
 */
function contacts(): { csv: string; rows: string[][] } {
  const header = ['id', 'first_name', 'email', 'company', 'note'];
  const rows: string[][] = [];
  for (let i = 0; i < ROWS; i++) {
    const note = i % 50 === 0 ? '=HYPERLINK("http://x.test")' : `met at "fair ${i % 7}", hall B`;
    rows.push([String(1000 + i), `Name${i}`, `person${i}@${DOMAINS[i % 4]}`, `Company ${i % 13}`, note]);
  }
  const quote = (cell: string) => (/[",\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);
  const csv = [header, ...rows].map((row) => row.map(quote).join(',')).join('\n') + '\n';
  return { csv, rows: [header, ...rows] };
}

describe.skipIf(skipE2e)('dashboard end to end: lists and usage', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  async function signedInPage(): Promise<Page> {
    const context = await newContext(browser, dashboard, { acceptDownloads: true });
    contexts.push(context);
    await signIn(context, dashboard.ownerEmail);
    return context.newPage();
  }

  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  it('a CSV of 1,000 rows with other columns is uploaded, runs, shows its counts, and its deliverable rows download with those columns intact', async () => {
    const { csv, rows } = contacts();
    const page = await signedInPage();
    await page.goto('/lists');
    await page.getByRole('heading', { name: 'Upload a list' }).waitFor();
    await page.getByLabel('Choose a file').setInputFiles({
      name: 'contacts.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv),
    });

    // The page read the file: the address column detected, the counts, a preview.
    const column = page.getByLabel('Column with the e-mail addresses');
    await column.waitFor();
    expect(await column.locator('option:checked').innerText()).toBe('Column 3: email (detected)');
    expect(await page.getByLabel('The first row holds column names').isChecked()).toBe(true);
    const summary = page.getByRole('definition');
    expect(await summary.allInnerTexts()).toEqual(expect.arrayContaining(['1,000']));
    await page
      .getByRole('table', { name: /Preview/ })
      .getByText(`person0@valid.${TEST_DOMAIN}`)
      .waitFor();
    expect(await page.getByLabel('List name').inputValue()).toBe('contacts');

    await page.getByRole('radio', { name: 'Test' }).check();
    await page.getByRole('button', { name: 'Start test job' }).click();

    // The job's page, with its progress bar, until the job is done.
    await page.getByRole('heading', { name: 'contacts' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/lists\/.+/);
    const progress = page.getByRole('progressbar', { name: 'Progress of contacts' });
    await progress.waitFor();
    expect(await progress.getAttribute('max')).toBe(String(ROWS));
    // The bar spans the card's width (not a fixed 130 px).
    const [bar, card] = await Promise.all([
      progress.boundingBox(),
      page.getByRole('region', { name: 'Progress' }).boundingBox(),
    ]);
    expect(bar!.width).toBeGreaterThan(card!.width * 0.85);
    await page
      .getByText(`${ROWS.toLocaleString('en-US')} of ${ROWS.toLocaleString('en-US')} verified`)
      .waitFor({ timeout: 60_000 });
    expect(await progress.getAttribute('value')).toBe(String(ROWS));

    // The counts by verdict, as bars: a quarter of the rows each (test mode decides by domain).
    const byVerdict = page.getByRole('figure', { name: 'By verdict' });
    await byVerdict.waitFor();
    for (const verdict of ['Deliverable', 'Undeliverable', 'Risky', 'Unknown'])
      await byVerdict
        .getByRole('listitem')
        .filter({ has: page.getByText(verdict, { exact: true }) })
        .getByText('250 (25%)')
        .waitFor();
    await page.getByRole('figure', { name: 'By reason' }).waitFor();

    const violations = await seriousViolations(page);
    expect(violations, describeViolations('the list page', violations)).toEqual([]);

    // The sidebar's column runs to the foot of a page taller than the window: a pixel at the
    // bottom left of a full-page capture is the sidebar's white, not the page's grey.
    const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
    expect(height).toBeGreaterThan(page.viewportSize()!.height);
    const pixel = (x: number, y: number) =>
      page.screenshot({ fullPage: true, clip: { x, y, width: 1, height: 1 } });
    const [sidebarWhite, footOfSidebar, footOfMain] = await Promise.all([
      pixel(100, 400),
      pixel(100, height - 3),
      pixel(700, height - 3),
    ]);
    expect(footOfSidebar.equals(sidebarWhite)).toBe(true);
    expect(footOfSidebar.equals(footOfMain)).toBe(false);

    // Deliverable rows only, in one click.
    await page
      .getByRole('group', { name: 'Safe to send' })
      .getByRole('button', { name: 'Deliverable only' })
      .click();
    expect(
      await page
        .getByRole('group', { name: 'Rows to download' })
        .getByRole('checkbox', { name: /^Risky/ })
        .isChecked(),
    ).toBe(false);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /Download CSV/ }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    const text = await readFile(await download.path(), 'utf8');
    const got = parse(text, { relax_column_count: false }) as string[][];

    const [header, ...body] = got;
    expect(header).toEqual([...rows[0]!, 'status', 'score', 'reason', 'did_you_mean', 'provider']);
    const expected = rows.slice(1).filter((row) => row[2]!.endsWith(`@valid.${TEST_DOMAIN}`));
    expect(body).toHaveLength(expected.length);
    expect(body.length).toBe(ROWS / 4);
    body.forEach((row, i) => {
      const original = expected[i]!;
      // The other columns as uploaded, in their order; a formula-like cell neutralised as v1 does.
      const note = original[4]!.startsWith('=') ? `'${original[4]}` : original[4];
      expect(row).toEqual([
        original[0],
        original[1],
        original[2],
        original[3],
        note,
        'deliverable',
        '99',
        '',
        // did_you_mean, then provider: test keys' fixed results name no provider.
        '',
        '',
      ]);
    });

    // The same rows as XLSX, the formula-like cells neutralised there too.
    const [xlsx] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /Download XLSX/ }).click(),
    ]);
    expect(xlsx.suggestedFilename()).toBe('contacts-deliverable.xlsx');
    const sheet = await readSheet<string>(await readFile(await xlsx.path()), { parseNumber: (t) => t });
    expect(sheet.map((row) => row.map((cell) => (cell === null ? '' : String(cell))))).toEqual(got);
    expect(sheet.some((row) => String(row[4]).startsWith(`'=HYPERLINK`))).toBe(true);
  }, 120_000);

  it('live verifications move the quota gauge and the daily chart of the overview without a reload', async () => {
    const page = await signedInPage();
    await page.goto('/');
    const gauge = page.getByRole('meter', { name: 'Quota used' });
    await gauge.waitFor();
    const usedBefore = Number(await gauge.getAttribute('aria-valuenow'));
    const chart = page.locator('.chart-canvas canvas').first();
    await chart.waitFor();
    const drawnBefore = await chart.screenshot();
    await page.getByText('Show the numbers as a table').click();
    const today = () => todaysRow(page);
    const singleBefore = (await today()).single;

    // Two through the API with the live key, one through the Verify page: every one counted.
    for (const local of ['ann', 'bob']) {
      const res = await callApi(`${dashboard.url}/v1/verify`, dashboard.liveKey, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `${local}@${NXDOMAIN}` }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'undeliverable' });
    }
    // The overview polls: the gauge moves while the page stays open.
    await page.waitForFunction(
      (before) =>
        Number(
          (
            globalThis as unknown as {
              document: { querySelector(s: string): { getAttribute(a: string): string } };
            }
          ).document
            .querySelector('[role="meter"]')
            .getAttribute('aria-valuenow'),
        ) ===
        before + 2,
      usedBefore,
      { timeout: 20_000 },
    );
    expect((await today()).single).toBe(singleBefore + 2);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Verify' }).click();
    await page.getByLabel('E-mail address').fill(`carl@${NXDOMAIN}`);
    await page.getByRole('button', { name: 'Verify' }).click();
    const result = page.getByRole('region', { name: /^Result/ });
    await result.getByText('Mail servers (MX)').waitFor();
    await result.getByText(`carl@${NXDOMAIN}`).first().waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.waitForFunction(
      (expected) =>
        (
          globalThis as unknown as {
            document: { querySelector(s: string): { getAttribute(a: string): string } };
          }
        ).document
          .querySelector('[role="meter"]')
          ?.getAttribute('aria-valuenow') === String(expected),
      usedBefore + 3,
      { timeout: 20_000 },
    );
    await page.getByText(`${usedBefore + 3} of 1,000 verifications used`).waitFor();
    await page.getByText('Show the numbers as a table').click();
    expect(await today()).toMatchObject({ single: singleBefore + 3 });
    // The canvas was drawn again with the new counts.
    expect((await chart.screenshot()).equals(drawnBefore)).toBe(false);
    const violations = await seriousViolations(page);
    expect(violations, describeViolations('the overview', violations)).toEqual([]);
  }, 90_000);
});

/** Today's row of the chart's table: the day of the period whose "this period" date is today. */
async function todaysRow(page: Page): Promise<{ single: number; batch: number }> {
  const table = page.getByRole('table', { name: 'Verifications per day' });
  await table.waitFor();
  const rows = await table
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from(
          (tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children,
          (cell) => (cell.textContent ?? '').trim(),
        ),
      ),
    );
  // Cells: day, date, single, batch, previous date, single, batch; days after today show "—".
  const counted = rows.filter((cells) => cells[2] !== '—');
  const last = counted[counted.length - 1];
  if (!last) throw new Error('the chart table has no day up to today');
  return { single: Number(last[2]!.replace(/,/g, '')), batch: Number(last[3]!.replace(/,/g, '')) };
}
