/**
 * The dashboard's tables on every backend, with several connections (processes) at once where
 * the rule is about concurrency: per-day usage kept by the quota's own transaction, one-time
 * tokens used once, failure counts, last uses that never go back, and rows that go when what
 * they belong to goes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { hashToken, issueInvitation } from '../../src/services/people/members.service.js';
import { resolvePlans } from '../../src/services/usage/plans.js';
import { createSession } from '../../src/services/people/sessions.service.js';
import { consumeQuota, refundQuota } from '../../src/services/usage/usage.service.js';
import { deleteJobChunks, insertChunks } from '../../src/store/chunk.store.js';
import { insertJob } from '../../src/store/job.store.js';
import { recordKeyUse } from '../../src/store/key-usage.store.js';
import { insertUpload, insertUploadRows, linkUpload } from '../../src/store/list-upload.store.js';
import { deleteMember, useToken } from '../../src/store/member.store.js';
import { addSignInFailure, countSignInFailures } from '../../src/store/session.store.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');
const SESSION_SETTINGS = {
  sessionIdleTimeoutMs: 3_600_000,
  sessionMaxAgeMs: 86_400_000,
  signInRateLimit: 0,
  signInFailureLimit: 0,
};

describe.each(testBackends())('the dashboard tables on %s', (backend) => {
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

  async function days(accountId: string) {
    return store!.db
      .selectFrom('usage_days')
      .select(['day', 'single', 'batch'])
      .where('account_id', '=', accountId)
      .orderBy('day')
      .execute();
  }

  it('keeps the day’s count with the quota’s, exactly, under concurrent consumption', async () => {
    store = await openTestStore(backend);
    const plans = resolvePlans({ free: { monthly_quota: 25 } });
    const account = await createAccount(store.db, clock, { email: 'days@example.org' });
    const dbs = await processes(4);
    await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        consumeQuota(dbs[i % dbs.length]!, {
          accountId: account.id,
          count: 1,
          now: clock.now(),
          plans,
          source: i % 2 === 0 ? 'single' : 'batch',
        }),
      ),
    );
    const [day] = await days(account.id);
    expect(day!.day).toBe('2026-03-10');
    expect(day!.single + day!.batch).toBe(25);
    const period = await store.db.selectFrom('usage_periods').select('used').executeTakeFirstOrThrow();
    expect(period.used).toBe(25);
  });

  it('counts nothing on the day when the quota refuses', async () => {
    store = await openTestStore(backend);
    const plans = resolvePlans({ free: { monthly_quota: 5 } });
    const account = await createAccount(store.db, clock, { email: 'refused@example.org' });
    await consumeQuota(store.db, {
      accountId: account.id,
      count: 4,
      now: clock.now(),
      plans,
      source: 'batch',
    });
    await expect(
      consumeQuota(store.db, { accountId: account.id, count: 2, now: clock.now(), plans, source: 'batch' }),
    ).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(await days(account.id)).toEqual([{ day: '2026-03-10', single: 0, batch: 4 }]);
  });

  it('gives a refund back to the day the addresses were counted on, never below zero', async () => {
    store = await openTestStore(backend);
    const plans = resolvePlans({});
    const account = await createAccount(store.db, clock, { email: 'refund@example.org' });
    const counted = clock.now().toISOString();
    const { periodStart } = await consumeQuota(store.db, {
      accountId: account.id,
      count: 10,
      now: clock.now(),
      plans,
      source: 'batch',
    });
    await consumeQuota(store.db, {
      accountId: account.id,
      count: 3,
      now: new Date(clock.now().getTime() + 86_400_000),
      plans,
      source: 'batch',
    });
    await refundQuota(store.db, { accountId: account.id, count: 4, periodStart, countedAt: counted });
    expect(await days(account.id)).toEqual([
      { day: '2026-03-10', single: 0, batch: 6 },
      { day: '2026-03-11', single: 0, batch: 3 },
    ]);
    await refundQuota(store.db, { accountId: account.id, count: 50, periodStart, countedAt: counted });
    expect((await days(account.id))[0]).toEqual({ day: '2026-03-10', single: 0, batch: 0 });
  });

  it('uses a one-time token once, however many present it at once', async () => {
    store = await openTestStore(backend);
    const account = await createAccount(store.db, clock, { email: 'tokens@example.org' });
    const issued = await issueInvitation(store.db, clock, {
      accountId: account.id,
      email: 'new@example.org',
    });
    const dbs = await processes(4);
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        useToken(dbs[i % dbs.length]!, hashToken(issued.token), clock.now().toISOString()),
      ),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
  });

  it('counts every failed sign-in of concurrent attempts', async () => {
    store = await openTestStore(backend);
    const dbs = await processes(4);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        addSignInFailure(dbs[i % dbs.length]!, 'k', '2026-03-10T12:00:00.000Z'),
      ),
    );
    expect(await countSignInFailures(store.db, 'k', '2026-03-10T12:00:00.000Z')).toBe(40);
  });

  it('never moves a key’s last use back', async () => {
    store = await openTestStore(backend);
    const account = await createAccount(store.db, clock, { email: 'uses@example.org' });
    const { record } = await createKey(store.db, clock, { accountId: account.id, kind: 'live' });
    await recordKeyUse(store.db, record.id, '2026-03-10T12:05:00.000Z');
    await recordKeyUse(store.db, record.id, '2026-03-10T12:01:00.000Z');
    const row = await store.db.selectFrom('api_key_usage').selectAll().executeTakeFirstOrThrow();
    expect(row.last_used_at).toBe('2026-03-10T12:05:00.000Z');
    await recordKeyUse(store.db, record.id, '2026-03-10T12:09:00.000Z');
    expect(
      (await store.db.selectFrom('api_key_usage').selectAll().executeTakeFirstOrThrow()).last_used_at,
    ).toBe('2026-03-10T12:09:00.000Z');
  });

  it('keeps the person and their sessions when a membership is deleted; its invitations go with it', async () => {
    store = await openTestStore(backend);
    const account = await createAccount(store.db, clock, { email: 'cascade@example.org' });
    const issued = await issueInvitation(store.db, clock, {
      accountId: account.id,
      email: 'gone@example.org',
    });
    await createSession(store.db, clock, SESSION_SETTINGS, issued.personId, issued.member!.id);
    await deleteMember(store.db, issued.member!.id);
    // The session lost its account (the next request moves it or ends it); the person stays.
    expect(await store.db.selectFrom('dashboard_sessions').select('member_id').execute()).toEqual([
      { member_id: null },
    ]);
    expect(await store.db.selectFrom('people').select('email').execute()).toEqual([
      { email: 'gone@example.org' },
    ]);
    expect(await store.db.selectFrom('member_tokens').select('token_hash').execute()).toEqual([]);
  });

  it('deletes an upload’s other columns with the job chunks they belong to', async () => {
    store = await openTestStore(backend);
    const account = await createAccount(store.db, clock, { email: 'upload@example.org' });
    const now = clock.now().toISOString();
    await insertUpload(store.db, {
      id: 'upl_1',
      account_id: account.id,
      job_id: null,
      name: 'list.csv',
      header: null,
      email_column: 0,
      column_count: 2,
      created_at: now,
    });
    for (const seq of [0, 1])
      await insertUploadRows(store.db, { upload_id: 'upl_1', seq, job_id: null, cells: '[["x"]]' });
    await store.db.transaction().execute(async (trx) => {
      await insertJob(trx, {
        id: 'job_1',
        account_id: account.id,
        mode: 'test',
        status: 'queued',
        total: 2,
        chunk_size: 1,
        chunk_count: 2,
        quota_period_start: null,
        webhook_url: null,
        notify_email: 0,
        created_at: now,
        results_expire_at: now,
      });
      await insertChunks(
        trx,
        [0, 1].map((seq) => ({
          job_id: 'job_1',
          seq,
          start_index: seq,
          size: 1,
          emails: '["a@example.com"]',
          repeats: null,
          state: 'pending' as const,
        })),
      );
      await linkUpload(trx, 'upl_1', 'job_1');
    });
    const linked = await store.db
      .selectFrom('list_upload_rows')
      .select(['seq', 'job_id'])
      .orderBy('seq')
      .execute();
    expect(linked).toEqual([
      { seq: 0, job_id: 'job_1' },
      { seq: 1, job_id: 'job_1' },
    ]);
    await deleteJobChunks(store.db, 'job_1');
    expect(await store.db.selectFrom('list_upload_rows').select('seq').execute()).toEqual([]);
  });
});
