/**
 * Lists re-verified on a schedule: PUT /jobs/:id/schedule (every N days, or null), each run a new
 * job of the list made by the scheduler's tick and counted against the quota, a run the quota
 * cannot cover skipped (overview notice, e-mail through the relay), and the list's history with
 * what changed since the previous run and the changed rows as CSV, also after the 72-hour
 * retention. Live jobs run through a chunk verifier whose verdicts each test sets, so a test can
 * change an address's verdict between two runs.
 */
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { DAY, HOUR } from '../../src/clock.js';
import type {
  JobDetail,
  JobItem,
  ListHistory,
  Overview,
  ScheduleAnswer,
} from '../../src/dashboard/contract.js';
import type { Status } from '../../src/engine/types.js';
import { startEmbeddedWorkers } from '../../src/runtime.js';
import { changeAccount } from '../../src/services/accounts/accounts.service.js';
import { createScheduler } from '../../src/jobs/scheduler.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import type { ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { openDatabase } from '../../src/store/db.js';
import type { ResultRow } from '../../src/store/chunk-codec.js';
import { startMailSink, type MailSink } from '../kit/mail-sink.js';
import { waitFor } from '../kit/wait-for.js';
import pino from 'pino';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

const SLOW = { timeout: 60_000 };

let h: DashboardHarness | undefined;
let sink: MailSink | undefined;
afterEach(async () => {
  await h?.close();
  await sink?.close();
  h = undefined;
  sink = undefined;
});

/** What the test's verifier answers per address (deliverable when not set). */
const verdicts = new Map<string, Status>();
const verifyChunk: ChunkVerifier = async (_job, emails) =>
  emails.map((e): ResultRow => {
    const status = verdicts.get(e) ?? 'deliverable';
    return {
      status,
      score: status === 'deliverable' ? 99 : 0,
      reason: status === 'undeliverable' ? 'smtp_rejected' : null,
      valid: status === 'deliverable',
      provider: null,
    };
  });

async function setUp(flags: Record<string, string> = {}): Promise<{ d: DashboardHarness; browser: Browser }> {
  verdicts.clear();
  h = await createDashboardHarness({ flags: { chunkSize: '10', ...flags }, verifyChunk });
  const { browser } = await h.signedIn();
  return { d: h, browser };
}

/** `n` rows of name, address, city: the address in the second column; row 1's city a formula. */
function list(n: number): string {
  return [
    'name,email,city',
    ...Array.from({ length: n }, (_, i) => `Person ${i},p${i}@example.com,${i === 1 ? '=1+1' : `City ${i}`}`),
  ].join('\r\n');
}

async function uploadList(browser: Browser, csv: string, mode: 'live' | 'test' = 'live'): Promise<JobItem> {
  const q = new URLSearchParams({ name: 'people.csv', email_column: '1', header: 'true', mode });
  const res = await browser.request('POST', `${API}/lists?${q.toString()}`, {
    raw: { type: 'text/csv', payload: csv },
  });
  expect(res.statusCode).toBe(202);
  return res.json<JobItem>();
}

function schedule(browser: Browser, jobId: string, body: unknown) {
  return browser.request('PUT', `${API}/jobs/${jobId}/schedule`, { body });
}

/** One tick of the scheduler the background jobs run (with the harness's config and clock). */
async function tick(d: DashboardHarness) {
  const { ctx } = d.runtime;
  const scheduler = createScheduler({
    db: ctx.db,
    clock: ctx.clock,
    config: ctx.config,
    mailer: ctx.mailer ?? null,
    logger: pino({ level: 'silent' }),
  });
  try {
    return await scheduler.runOnce();
  } finally {
    await scheduler.stop();
  }
}

/** One tick in each of `processes` schedulers at once, each on its own connection to the store. */
async function ticksAtOnce(d: DashboardHarness, processes: number) {
  const { ctx } = d.runtime;
  const others = Array.from({ length: processes - 1 }, () => openDatabase(ctx.config));
  try {
    return await Promise.all(
      [ctx.db, ...others].map((db) =>
        createScheduler({
          db,
          clock: ctx.clock,
          config: ctx.config,
          mailer: ctx.mailer ?? null,
          logger: pino({ level: 'silent' }),
        }).runOnce(),
      ),
    );
  } finally {
    for (const o of others) await o.destroy();
  }
}

/** Moves the clock; the browser signs in again (the session's idle timeout has passed). */
async function later(d: DashboardHarness, browser: Browser, ms: number): Promise<void> {
  d.advance(ms);
  await browser.signIn('owner@example.org');
}

async function history(browser: Browser, jobId: string): Promise<ListHistory['runs']> {
  const res = await browser.get(`${API}/jobs/${jobId}/history`);
  expect(res.statusCode).toBe(200);
  return res.json<ListHistory>().runs;
}

describe('lists re-verified on a schedule', SLOW, () => {
  it('accepts whole numbers of days from 1 to 365 or null, and shows the schedule on the job', async () => {
    const { d, browser } = await setUp();
    const job = await uploadList(browser, list(3));
    await d.drain();
    for (const bad of [
      { every_days: 0 },
      { every_days: 366 },
      { every_days: 1.5 },
      { every_days: 'weekly' },
      { every_days: '7' },
      { every_days: true },
      {},
      { every_days: 7, extra: 1 },
    ]) {
      const res = await schedule(browser, job.job_id, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
    }
    const set = await schedule(browser, job.job_id, { every_days: 7 });
    expect(set.statusCode).toBe(200);
    const expected = { every_days: 7, next_run_at: '2026-03-17T12:00:00.000Z' };
    expect(set.json<ScheduleAnswer>().schedule).toEqual(expected);
    expect((await browser.get(`${API}/jobs/${job.job_id}`)).json<JobDetail>().schedule).toEqual(expected);
    const stop = await schedule(browser, job.job_id, { every_days: null });
    expect(stop.json<ScheduleAnswer>()).toEqual({ schedule: null });
    expect((await browser.get(`${API}/jobs/${job.job_id}`)).json<JobDetail>().schedule).toBeNull();
  });

  it('refuses another account’s job (404), an API batch (422) and a list not verified yet (409)', async () => {
    const { d, browser } = await setUp();
    const mine = await uploadList(browser, list(2));
    const other = await d.createOtherAccount();
    await d.addMember('them@example.org', { accountId: other.accountId });
    const them = d.browser();
    await them.signIn('them@example.org');
    expect((await schedule(them, mine.job_id, { every_days: 7 })).statusCode).toBe(404);
    expect(errorCode(await schedule(browser, mine.job_id, { every_days: 7 }))).toBe('job_not_ready');
    const batch = await d.submit(d.testKey, { emails: ['a@example.com'] });
    const res = await schedule(browser, batch.json<{ job_id: string }>().job_id, { every_days: 7 });
    expect(res.statusCode).toBe(422);
  });

  it('runs a due list once as a new job counted against the quota, and shows what changed', async () => {
    const { d, browser } = await setUp({ plans: '{"free":{"monthly_quota":100}}' });
    verdicts.set('p1@example.com', 'undeliverable');
    const first = await uploadList(browser, list(12));
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 7 });

    await later(d, browser, 7 * DAY - HOUR);
    expect(await tick(d)).toEqual({ runs: 0, skipped: 0, compared: 0 });
    await later(d, browser, HOUR);
    // p1 comes back, p4 and p11 (in the second chunk) go.
    verdicts.delete('p1@example.com');
    verdicts.set('p4@example.com', 'undeliverable');
    verdicts.set('p11@example.com', 'risky');
    expect((await tick(d)).runs).toBe(1);
    expect((await tick(d)).runs).toBe(0);
    const usage = (await browser.get(`${API}/overview`)).json<Overview>().usage;
    expect(usage.quota.used).toBe(24);

    let runs = await history(browser, first.job_id);
    expect(runs.map((r) => [r.kind, r.total])).toEqual([
      ['run', 12],
      ['upload', 12],
    ]);
    const runJob = runs[0]!.job_id!;
    expect(runs[0]!.changes).toBeNull();
    await d.drain();
    expect((await tick(d)).compared).toBe(1);

    runs = await history(browser, runJob);
    expect(runs[0]).toMatchObject({
      job_id: runJob,
      status: 'completed',
      counts: { deliverable: 10, undeliverable: 1, risky: 1, unknown: 0 },
      changes: { became_undeliverable: 1, became_deliverable: 1, compared_with: first.job_id },
    });
    expect(runs[1]).toMatchObject({ kind: 'upload', counts: { deliverable: 11, undeliverable: 1 } });
    // The run's page is the list's page: same schedule, next one a period on.
    expect((await browser.get(`${API}/jobs/${runJob}`)).json<JobDetail>().schedule).toEqual({
      every_days: 7,
      next_run_at: '2026-03-24T12:00:00.000Z',
    });

    const changes = await browser.get(`${API}/jobs/${runJob}/changes`);
    expect(changes.statusCode).toBe(200);
    expect(changes.headers['content-disposition']).toBe('attachment; filename="people-changes.csv"');
    expect(parse(changes.body)).toEqual([
      ['name', 'email', 'city', 'previous_status', 'status', 'reason'],
      ['Person 1', 'p1@example.com', "'=1+1", 'undeliverable', 'deliverable', ''],
      ['Person 4', 'p4@example.com', 'City 4', 'deliverable', 'undeliverable', 'smtp_rejected'],
    ]);
    expect((await browser.get(`${API}/jobs/${first.job_id}/changes`)).statusCode).toBe(404);
  });

  it('runs from its kept copy after the source passed retention, and compares with the previous run', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(5));
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 4 });
    await later(d, browser, 4 * DAY);
    await sweepOnce(d.runtime.ctx.db, d.runtime.ctx.clock);
    expect((await browser.get(`${API}/jobs/${first.job_id}/download`)).statusCode).toBe(410);
    verdicts.set('p0@example.com', 'undeliverable');
    expect((await tick(d)).runs).toBe(1);
    await d.drain();
    await tick(d);
    // Second run, after the first run's results are gone too: compared with the first run.
    await later(d, browser, 4 * DAY);
    await sweepOnce(d.runtime.ctx.db, d.runtime.ctx.clock);
    verdicts.clear();
    expect((await tick(d)).runs).toBe(1);
    await d.drain();
    await tick(d);
    const runs = await history(browser, first.job_id);
    expect(runs.map((r) => [r.kind, r.changes?.became_undeliverable, r.changes?.became_deliverable])).toEqual(
      [
        ['run', 0, 1],
        ['run', 1, 0],
        ['upload', undefined, undefined],
      ],
    );
    expect(runs[0]!.changes!.compared_with).toBe(runs[1]!.job_id);
    const download = parse((await browser.get(`${API}/jobs/${runs[0]!.job_id}/download`)).body) as string[][];
    expect(download[1]!.slice(0, 4)).toEqual(['Person 0', 'p0@example.com', 'City 0', 'deliverable']);
    // The changed rows outlive the results' retention.
    await later(d, browser, 4 * DAY);
    await sweepOnce(d.runtime.ctx.db, d.runtime.ctx.clock);
    const changes = parse((await browser.get(`${API}/jobs/${runs[1]!.job_id}/changes`)).body) as string[][];
    expect(changes.slice(1).map((r) => r[1])).toEqual(['p0@example.com']);
  });

  it('skips a run the remaining quota cannot cover: recorded, on the overview, e-mailed to the members', async () => {
    sink = await startMailSink();
    const { d, browser } = await setUp({
      plans: '{"free":{"monthly_quota":15}}',
      smtpRelayUrl: sink.url,
      publicBaseUrl: 'https://verify.example.net',
    });
    const first = await uploadList(browser, list(10));
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 1 });
    const before = sink.messages.length;
    await later(d, browser, DAY);
    expect(await tick(d)).toMatchObject({ runs: 0, skipped: 1 });
    const o = (await browser.get(`${API}/overview`)).json<Overview>();
    expect(o.usage.quota.used).toBe(10);
    expect(o.schedule_notices).toEqual([
      {
        job_id: first.job_id,
        name: 'people.csv',
        skipped_at: '2026-03-11T12:00:00.000Z',
        need: 10,
        next_run_at: '2026-03-12T12:00:00.000Z',
      },
    ]);
    const mails = sink.messages
      .slice(before)
      .filter((m) => m.text.includes('Scheduled re-verification skipped'));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toEqual(['owner@example.org']);
    expect(mails[0]!.text).toContain(`https://verify.example.net/lists/${first.job_id}`);
    const runs = await history(browser, first.job_id);
    expect(runs.map((r) => [r.kind, r.job_id, r.total])).toEqual([
      ['skipped', null, 10],
      ['upload', first.job_id, 10],
    ]);
    // Not tried again before the next period.
    expect(await tick(d)).toMatchObject({ runs: 0, skipped: 0 });
  });

  it('makes no run once the schedule is stopped, and keeps the history', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(3), 'test');
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 2 });
    await later(d, browser, 2 * DAY);
    expect((await tick(d)).runs).toBe(1);
    await schedule(browser, first.job_id, { every_days: null });
    await later(d, browser, 10 * DAY);
    expect((await tick(d)).runs).toBe(0);
    expect((await history(browser, first.job_id)).map((r) => r.kind)).toEqual(['run', 'upload']);
  });

  it('waits while an operator has the account suspended, and runs once the account is resumed', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(3), 'test');
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 2 });
    const { ctx } = d.runtime;
    await changeAccount(ctx.db, ctx.clock, d.accountId, { suspended: true, reason: 'unpaid invoice' });
    await later(d, browser, 3 * DAY);
    expect((await tick(d)).runs).toBe(0);
    await changeAccount(ctx.db, ctx.clock, d.accountId, { suspended: false });
    expect((await tick(d)).runs).toBe(1);
    expect((await history(browser, first.job_id)).map((r) => r.kind)).toEqual(['run', 'upload']);
  });

  it('makes one run per due list when several processes tick at once', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(3), 'test');
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 1 });
    await later(d, browser, DAY);
    const reports = await ticksAtOnce(d, 4);
    expect(reports.reduce((n, r) => n + r.runs, 0)).toBe(1);
    expect((await history(browser, first.job_id)).map((r) => r.kind)).toEqual(['run', 'upload']);
  });

  it('compares a run ten parts per transaction, each row once when several processes compare at once', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(250));
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 1 });
    await later(d, browser, DAY);
    // One change in each of the three steps (ten parts of ten rows each).
    for (const i of [3, 140, 249]) verdicts.set(`p${i}@example.com`, 'undeliverable');
    expect((await tick(d)).runs).toBe(1);
    await d.drain();
    const reports = await ticksAtOnce(d, 4);
    expect(reports.reduce((n, r) => n + r.compared, 0)).toBe(1);
    const runs = await history(browser, first.job_id);
    expect(runs[0]).toMatchObject({
      counts: { deliverable: 247, undeliverable: 3, risky: 0, unknown: 0 },
      changes: { became_undeliverable: 3, became_deliverable: 0 },
    });
    const run = await d.runtime.ctx.db
      .selectFrom('list_runs')
      .select(['compare_step'])
      .where('job_id', '=', runs[0]!.job_id!)
      .executeTakeFirstOrThrow();
    // 25 parts in three steps, then the step that records the counts.
    expect(run.compare_step).toBe(4);
    const changes = parse((await browser.get(`${API}/jobs/${runs[0]!.job_id}/changes`)).body) as string[][];
    expect(changes.slice(1).map((r) => r[1])).toEqual([3, 140, 249].map((i) => `p${i}@example.com`));
  });

  it('goes on from the last part compared when a comparison stopped part-way, counting no row twice', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(300));
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 1 });
    await later(d, browser, DAY);
    for (const i of [2, 120, 220]) verdicts.set(`p${i}@example.com`, 'undeliverable');
    expect((await tick(d)).runs).toBe(1);
    await d.drain();
    // The 13th part's copy (in the second step) no longer matches the run: the comparison stops there.
    const { db } = d.runtime.ctx;
    const part = await db
      .selectFrom('list_schedule_rows')
      .select('emails')
      .where('seq', '=', 12)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('list_schedule_rows')
      .set({ emails: JSON.stringify(Array(10).fill('other@example.com')) })
      .where('seq', '=', 12)
      .execute();
    expect((await tick(d)).compared).toBe(0);
    const stopped = await db
      .selectFrom('list_runs')
      .select(['compare_step', 'compared_at'])
      .where('job_id', 'is not', null)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(stopped).toEqual({ compare_step: 1, compared_at: null });
    await db.updateTable('list_schedule_rows').set({ emails: part.emails }).where('seq', '=', 12).execute();
    expect((await tick(d)).compared).toBe(1);
    const runs = await history(browser, first.job_id);
    expect(runs[0]).toMatchObject({
      counts: { deliverable: 297, undeliverable: 3, risky: 0, unknown: 0 },
      changes: { became_undeliverable: 3, became_deliverable: 0 },
    });
    const changes = parse((await browser.get(`${API}/jobs/${runs[0]!.job_id}/changes`)).body) as string[][];
    expect(changes.slice(1).map((r) => r[1])).toEqual([2, 120, 220].map((i) => `p${i}@example.com`));
  });

  it('never runs a list whose kept copy a request left half-made, and makes the copy again on the next PUT', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(25));
    await d.drain();
    const { db } = d.runtime.ctx;
    // As a request that died after copying the first part leaves it (its lease ten minutes on).
    expect((await schedule(browser, first.job_id, { every_days: 1 })).statusCode).toBe(200);
    await db.deleteFrom('list_schedule_rows').where('seq', '>=', 1).execute();
    await db
      .updateTable('list_schedules')
      .set({ copying_until: new Date(d.runtime.ctx.clock.now().getTime() + 10 * 60_000).toISOString() })
      .execute();
    await later(d, browser, DAY);
    expect(await tick(d)).toEqual({ runs: 0, skipped: 0, compared: 0 });
    // The lease is over: the next PUT copies the list again, whole, and the runs go on.
    expect((await schedule(browser, first.job_id, { every_days: 1 })).statusCode).toBe(200);
    const parts = await db.selectFrom('list_schedule_rows').select('seq').orderBy('seq').execute();
    expect(parts.map((p) => p.seq)).toEqual([0, 1, 2]);
    verdicts.set('p24@example.com', 'undeliverable');
    await later(d, browser, DAY);
    expect((await tick(d)).runs).toBe(1);
    await d.drain();
    expect((await tick(d)).compared).toBe(1);
    expect((await history(browser, first.job_id))[0]).toMatchObject({
      total: 25,
      changes: { became_undeliverable: 1, became_deliverable: 0 },
    });
  });

  it('is run by the background jobs of serve and mailverdict worker', async () => {
    const { d, browser } = await setUp();
    const first = await uploadList(browser, list(3), 'test');
    await d.drain();
    await schedule(browser, first.job_id, { every_days: 1 });
    await later(d, browser, DAY);
    const background = startEmbeddedWorkers(d.runtime.ctx);
    try {
      // The scheduler ticks when it starts; the embedded worker then verifies the run.
      await waitFor(
        'the run, verified',
        async () => {
          const [latest] = await history(browser, first.job_id);
          return latest?.kind === 'run' && latest.status === 'completed' ? true : undefined;
        },
        20_000,
      );
    } finally {
      await background.stop();
    }
    expect((await history(browser, first.job_id)).map((r) => r.kind)).toEqual(['run', 'upload']);
  });
});
