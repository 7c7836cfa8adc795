/**
 * Re-verification on a schedule, end to end: a list uploaded through the page runs in test mode,
 * its page puts it on a schedule of 7 days, the run comes due, a scheduler on the same store
 * makes it (as a `mailverdict worker` process beside `serve` would; `serve`'s own verifies it),
 * and the list page shows the history with what changed and downloads the changed rows.
 *
 * `serve` runs on the real clock, so the test lets the 7 days pass by moving the schedule's next
 * run into the past in the store. Test mode gives fixed results by domain, so nothing would
 * change between two runs: the test writes other verdicts into the schedule's kept baseline for
 * two rows (as if the previous run had found them so), and the run then finds one address
 * became undeliverable and one deliverable.
 */
import { parse } from 'csv-parse/sync';
import { readFile } from 'node:fs/promises';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createScheduler } from '../../src/jobs/scheduler.js';
import { openDatabase } from '../../src/store/db.js';
import {
  acceptInvitation,
  describeViolations,
  seriousViolations,
  signIn,
  skipE2e,
  TEST_DOMAIN,
} from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

describe.skipIf(skipE2e)('dashboard end to end: lists re-verified on a schedule', { timeout: 90_000 }, () => {
  const e2e = useE2eSuite((d) => acceptInvitation(d, d.ownerInvitationLink));
  async function signedInPage(): Promise<Page> {
    const context = await e2e.context({ acceptDownloads: true });
    await signIn(context, e2e.dashboard.ownerEmail);
    return context.newPage();
  }

  it('a list put on a schedule is re-verified when due, and its page shows the run and what changed', async () => {
    const csv = [
      'name,email',
      `Ann,ann@valid.${TEST_DOMAIN}`,
      `Bob,bob@invalid.${TEST_DOMAIN}`,
      `Cy,cy@valid.${TEST_DOMAIN}`,
      `Di,di@invalid.${TEST_DOMAIN}`,
    ].join('\n');
    const page = await signedInPage();
    await page.goto('/lists');
    await page.getByLabel('Choose a file').setInputFiles({
      name: 'members.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv),
    });
    await page.getByRole('radio', { name: 'Test' }).check();
    await page.getByRole('button', { name: 'Start test job' }).click();
    await page.getByRole('heading', { name: 'members' }).waitFor();
    await page.getByText('4 of 4 verified').waitFor({ timeout: 60_000 });
    const firstJob = new URL(page.url()).pathname.split('/').at(-1)!;

    // The schedule, set on the list's page.
    const days = page.getByLabel('Re-verify every (days)');
    await days.fill('7');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByText(/^Re-verified every 7 days\. Next run:/).waitFor();

    // Seven days later; the previous run had found Ann undeliverable and Bob deliverable.
    const config = loadConfig({ dataDir: e2e.dashboard.dataDir }, {});
    const db = openDatabase(config);
    try {
      await db
        .updateTable('list_schedules')
        .set({ next_run_at: new Date(Date.now() - 1000).toISOString() })
        .execute();
      await db
        .updateTable('list_schedule_rows')
        .set({ statuses: JSON.stringify(['undeliverable', 'deliverable', 'deliverable', 'undeliverable']) })
        .execute();
      const scheduler = createScheduler({
        db,
        clock: systemClock,
        config,
        logger: pino({ level: 'silent' }),
      });
      try {
        const first = await scheduler.runOnce();
        expect(first.runs).toBe(1);
        // serve's worker verifies the run; the next tick compares it (serve's own may do it first).
        for (let i = 0; i < 100; i++) {
          await scheduler.runOnce();
          const run = await db.selectFrom('list_runs').select('compared_at').executeTakeFirst();
          if (run?.compared_at) break;
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        await scheduler.stop();
      }
    } finally {
      await db.destroy();
    }

    await page.reload();
    const history = page.getByRole('table', { name: 'History of members' });
    await history.waitFor();
    const rows = history.getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(1).innerText()).toContain('1 became undeliverable, 1 became deliverable');
    expect(await rows.nth(2).innerText()).toContain('First verification');
    const violations = await seriousViolations(page);
    expect(violations, describeViolations('the list page with its history', violations)).toEqual([]);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      rows
        .nth(1)
        .getByRole('link', { name: /^Download changed rows/ })
        .click(),
    ]);
    expect(download.suggestedFilename()).toBe('members-changes.csv');
    expect(parse(await readFile(await download.path(), 'utf8'))).toEqual([
      ['name', 'email', 'previous_status', 'status', 'reason'],
      ['Ann', `ann@valid.${TEST_DOMAIN}`, 'undeliverable', 'deliverable', ''],
      ['Bob', `bob@invalid.${TEST_DOMAIN}`, 'deliverable', 'undeliverable', expect.any(String)],
    ]);

    // The run's own page is the list's: same schedule, same history.
    await rows.nth(1).getByRole('link').first().click();
    await page.getByText(/^Re-verified every 7 days\./).waitFor();
    expect(new URL(page.url()).pathname).not.toBe(`/lists/${firstJob}`);
  });
});
