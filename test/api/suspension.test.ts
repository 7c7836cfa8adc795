/**
 * Account suspension (docs/operators.md) through the real app and worker: the account's keys get
 * 403 account_suspended from the next request on (the key cache warmed before), its jobs pause
 * and continue when it is resumed. `MAILVERDICT_TEST_STORE=postgres` reruns it on PostgreSQL.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { authenticateKey, type AuthenticatedKey } from '../../src/services/keys/keys.service.js';
import { createKeyCache } from '../../src/services/keys/key-cache.js';
import {
  CLI_OPERATOR,
  changeOperatorAccount,
} from '../../src/services/operators/operator-accounts.service.js';
import { plansFromConfig } from '../../src/services/usage/plans.js';
import { serviceHealth } from '../../src/services/operators/service-health.service.js';
import { openDatabase } from '../../src/store/db.js';
import { createJobsHarness, fixtureEmails, type JobsHarness } from '../kit/jobs-kit.js';
import { TRUST_OFF } from '../../src/engine/dns/resolver-trust.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function harness(): Promise<JobsHarness> {
  const h = await createJobsHarness({ flags: { chunkSize: '10', lease: '30s' } });
  closers.push(() => h.close());
  return h;
}

function operatorDeps(h: JobsHarness) {
  const { ctx } = h.runtime;
  return {
    db: ctx.db,
    clock: ctx.clock,
    plans: plansFromConfig(ctx.config),
    logger: pino({ level: 'silent' }),
  };
}

const suspend = (h: JobsHarness, reason: string | null = 'unpaid invoice') =>
  changeOperatorAccount(operatorDeps(h), CLI_OPERATOR, h.accountId, { suspended: true, reason });
const resume = (h: JobsHarness) =>
  changeOperatorAccount(operatorDeps(h), CLI_OPERATOR, h.accountId, { suspended: false });

const email = { email: 'someone@valid.example.com' };

describe('a suspended account', () => {
  it('has its live and test keys refused with 403 account_suspended at once, the reason in the message', async () => {
    const h = await harness();
    // Warm the key cache first: the suspension must empty it.
    expect((await h.verify(h.testKey, email)).statusCode).toBe(200);
    expect((await h.usage(h.liveKey)).statusCode).toBe(200);

    await suspend(h);
    for (const res of [
      await h.verify(h.testKey, email),
      await h.usage(h.liveKey),
      await h.verify(h.liveKey, email),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'account_suspended' });
      expect(res.json<{ message: string }>().message).toContain('unpaid invoice');
    }
    // Another account is not touched.
    const other = await h.createOtherAccount();
    expect((await h.verify(other.testKey, email)).statusCode).toBe(200);

    await resume(h);
    expect((await h.verify(h.testKey, email)).statusCode).toBe(200);
    expect((await h.usage(h.liveKey)).statusCode).toBe(200);
  });

  it('is seen suspended by another process at once, through its own key cache', async () => {
    const h = await harness();
    const other = openDatabase(h.runtime.ctx.config);
    closers.push(() => other.destroy());
    const cache = createKeyCache<AuthenticatedKey>();
    expect((await authenticateKey(other, h.testKey, cache)).accountSuspension).toBeNull();
    expect((await authenticateKey(other, h.testKey, cache)).accountSuspension).toBeNull();

    await suspend(h, null);
    // The other connection's change token moves with the commit (SQLite: data_version;
    // PostgreSQL: the NOTIFY, which may take a moment to arrive).
    let seen: AuthenticatedKey['accountSuspension'] = null;
    for (const until = Date.now() + 30_000; seen === null && Date.now() < until;) {
      seen = (await authenticateKey(other, h.testKey, cache)).accountSuspension;
      if (seen === null) await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toMatchObject({ reason: null, since: h.clock.now().toISOString() });
  });

  it('has its jobs paused: no chunk is claimed until it is resumed, then the job completes', async () => {
    const h = await harness();
    const submitted = await h.submit(h.testKey, { emails: fixtureEmails(30), notify_email: false });
    expect(submitted.statusCode).toBe(202);
    const jobId = submitted.json<{ job_id: string }>().job_id;
    expect(await h.worker.runOnce()).toBe(true);

    await suspend(h);
    expect(await h.worker.runOnce()).toBe(false);
    const job = await h.runtime.ctx.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(job.status).toBe('processing');
    const health = await serviceHealth({
      db: h.runtime.ctx.db,
      clock: h.clock,
      leaseMs: 30_000,
      dnsTrust: () => TRUST_OFF.status(),
    });
    expect(health.chunks).toEqual({ pending: 2, paused: 2 });
    expect(health.jobs.processing).toBe(1);

    // Another account's job runs meanwhile.
    const other = await h.createOtherAccount();
    const otherJob = await h.submit(other.testKey, { emails: fixtureEmails(5), notify_email: false });
    expect(otherJob.statusCode).toBe(202);
    expect(await h.drain()).toBe(1);

    await resume(h);
    expect(await h.drain()).toBe(2);
    const done = await h.job(h.testKey, jobId);
    expect(done.json()).toMatchObject({ status: 'completed', processed: 30 });
  });
});
