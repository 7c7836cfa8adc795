/**
 * The tables of scheduled lists on every backend, with several connections (processes) at once:
 * a due run claimed by exactly one claimer, claimable again only once its lease has passed (and
 * then no longer settled by the first claimer); a
 * run's comparison taken by exactly one; and a list's schedule, kept copy and runs going with the
 * list's job.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { DAY, ManualClock, MINUTE } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { insertJob } from '../../src/store/job.store.js';
import {
  claimSchedule,
  insertRun,
  insertSchedule,
  insertScheduleRows,
  settleSchedule,
  takeComparison,
} from '../../src/store/list-schedule.store.js';
import { insertUpload } from '../../src/store/list-upload.store.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');
const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();

describe.each(testBackends())('the scheduled-list tables on %s', (backend) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function processes(n: number): Promise<Kysely<Database>[]> {
    const dbs = [store!.db];
    while (dbs.length < n) dbs.push(await store!.openAnother());
    return dbs;
  }

  /** An account with one uploaded list (job `job_1`, upload `upl_1`) due at `dueAt`. */
  async function scheduledList(dueAt: string): Promise<void> {
    const db = store!.db;
    const account = await createAccount(db, clock, { email: 'lists@example.org' });
    const now = clock.now().toISOString();
    await insertJob(db, {
      id: 'job_1',
      account_id: account.id,
      mode: 'test',
      status: 'completed',
      total: 1,
      chunk_size: 10,
      chunk_count: 1,
      quota_period_start: null,
      webhook_url: null,
      notify_email: 0,
      created_at: now,
      results_expire_at: now,
    });
    await insertUpload(db, {
      id: 'upl_1',
      account_id: account.id,
      job_id: 'job_1',
      name: 'list.csv',
      header: null,
      email_column: 0,
      column_count: 1,
      created_at: now,
    });
    await insertSchedule(db, {
      list_id: 'upl_1',
      account_id: account.id,
      every_days: 1,
      next_run_at: dueAt,
      claimed_until: null,
      baseline_job: 'job_1',
      skipped_at: null,
      skipped_need: null,
      created_at: now,
    });
    await insertScheduleRows(db, {
      list_id: 'upl_1',
      seq: 0,
      emails: '["a@example.com"]',
      cells: '[[]]',
      statuses: '["deliverable"]',
    });
  }

  it('gives a due run to exactly one of many concurrent claimers', async () => {
    store = await openTestStore(backend);
    await scheduledList(at(-MINUTE));
    const dbs = await processes(4);
    const claims = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        claimSchedule(dbs[i % dbs.length]!, 'upl_1', at(0), at(10 * MINUTE)),
      ),
    );
    expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
    expect(claims.find((c) => c !== undefined)!.claimed_until).toBe(at(10 * MINUTE));
  });

  it('claims nothing before the run is due, and a held run again only after its lease', async () => {
    store = await openTestStore(backend);
    await scheduledList(at(MINUTE));
    expect(await claimSchedule(store.db, 'upl_1', at(0), at(10 * MINUTE))).toBeUndefined();
    expect(await claimSchedule(store.db, 'upl_1', at(MINUTE), at(11 * MINUTE))).toBeDefined();
    expect(await claimSchedule(store.db, 'upl_1', at(5 * MINUTE), at(15 * MINUTE))).toBeUndefined();
    expect(await claimSchedule(store.db, 'upl_1', at(11 * MINUTE), at(21 * MINUTE))).toBeDefined();
    // The first claimer's lease is gone: it may not settle the run; the second may.
    const settled = { next_run_at: at(DAY), skipped_at: null, skipped_need: null };
    expect(await settleSchedule(store.db, 'upl_1', at(11 * MINUTE), settled)).toBe(false);
    expect(await settleSchedule(store.db, 'upl_1', at(21 * MINUTE), settled)).toBe(true);
    expect(await claimSchedule(store.db, 'upl_1', at(22 * MINUTE), at(32 * MINUTE))).toBeUndefined();
  });

  it('lets exactly one process take a run’s comparison', async () => {
    store = await openTestStore(backend);
    await scheduledList(at(0));
    await insertRun(store.db, {
      id: 'run_1',
      list_id: 'upl_1',
      job_id: 'job_1',
      outcome: 'submitted',
      total: 1,
      created_at: at(0),
    });
    const dbs = await processes(4);
    const taken = await Promise.all(
      dbs.map((db) => db.transaction().execute((trx) => takeComparison(trx, 'run_1', at(0)))),
    );
    expect(taken.filter(Boolean)).toHaveLength(1);
  });

  it('deletes the schedule, its kept copy and the runs with the list', async () => {
    store = await openTestStore(backend);
    await scheduledList(at(0));
    await insertRun(store.db, {
      id: 'run_1',
      list_id: 'upl_1',
      job_id: null,
      outcome: 'skipped_quota',
      total: 1,
      created_at: at(0),
    });
    await store.db.deleteFrom('jobs').where('id', '=', 'job_1').execute();
    for (const table of ['list_schedules', 'list_schedule_rows', 'list_runs'] as const)
      expect(await store.db.selectFrom(table).selectAll().execute(), table).toEqual([]);
  });
});
