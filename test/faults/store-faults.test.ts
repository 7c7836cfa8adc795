/**
 * Issue 7, fault injection: the store failing (disk full, busy past its timeout, I/O error). The
 * client gets 503 service_unavailable with Retry-After and the envelope; nothing half-done is
 * kept; once the store heals, the retried request succeeds and a job resumes.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createJobsHarness, fixtureEmails, harnessWorker, type JobsHarness } from '../kit/jobs-kit.js';
import { openFaultyStore, type FaultyStore } from './faulty-store.js';

let h: JobsHarness;
let store: FaultyStore;
let app: FastifyInstance;

beforeEach(async () => {
  h = await createJobsHarness({ flags: { chunkSize: '10' }, account: { plan: 'starter' } });
  store = openFaultyStore(h.dir);
  app = buildApp({ ...h.runtime.ctx, db: store.db });
  await app.ready();
});
afterEach(async () => {
  await app.close();
  await store.close();
  await h.close();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

async function count(table: 'jobs' | 'job_chunks'): Promise<number> {
  const row = await h.runtime.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function used(): Promise<number> {
  const res = await h.usage(h.liveKey);
  return res.json<{ quota: { used: number } }>().quota.used;
}

describe.each(['SQLITE_FULL', 'SQLITE_BUSY', 'SQLITE_IOERR'] as const)(
  'the store failing writes with %s',
  (code) => {
    it('answers a batch submission 503 with Retry-After, stores nothing, and takes the retry', async () => {
      store.fail(code);
      const submit = () =>
        app.inject({
          method: 'POST',
          url: '/v1/verify/batch',
          headers: { ...auth(h.liveKey), 'idempotency-key': 'retry-me' },
          payload: JSON.stringify({ emails: fixtureEmails(25), notify_email: false }),
        });
      const refused = await submit();
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toMatchObject({ error: 'service_unavailable' });
      expect(refused.json<{ request_id: string }>().request_id).toBe(refused.headers['x-request-id']);
      expect(refused.headers['retry-after']).toBe('2');
      expect(store.failures).toBeGreaterThan(0);
      expect(await count('jobs')).toBe(0);
      expect(await count('job_chunks')).toBe(0);
      expect(await used()).toBe(0);

      store.fail(null);
      const accepted = await submit();
      expect(accepted.statusCode).toBe(202);
      expect(await count('job_chunks')).toBe(3);
      expect(await used()).toBe(25);
    });

    it('answers a live verification 503 without counting it', async () => {
      store.fail(code);
      const res = await app.inject({
        method: 'POST',
        url: '/v1/verify',
        headers: auth(h.liveKey),
        payload: JSON.stringify({ email: 'a@nowhere.test' }),
      });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      store.fail(null);
      expect(await used()).toBe(0);
    });
  },
);

describe('the store failing reads', () => {
  it('answers 503 with the envelope instead of 500', async () => {
    // Authenticate once while healthy so the key cache does not need the store.
    expect(
      (await app.inject({ method: 'GET', url: '/v1/account/usage', headers: auth(h.testKey) })).statusCode,
    ).toBe(200);
    store.fail('SQLITE_IOERR', 'any');
    const res = await app.inject({ method: 'GET', url: '/v1/jobs', headers: auth(h.testKey) });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'service_unavailable' });
  });
});

describe('a worker whose result write fails', () => {
  it('keeps the chunk, and the job completes with every row once the store heals', async () => {
    const submitted = await h.submit(h.testKey, { emails: fixtureEmails(25), notify_email: false });
    const jobId = submitted.json<{ job_id: string }>().job_id;
    const worker = harnessWorker(h, { db: store.db });
    try {
      // Claim (a write) works; the result write fails.
      let writes = 0;
      const original = store.db.transaction.bind(store.db);
      store.db.transaction = () => {
        writes++;
        store.fail('SQLITE_FULL');
        return original();
      };
      await expect(worker.runOnce()).rejects.toThrow(/disk is full/);
      expect(writes).toBe(1);
      store.db.transaction = original;
      store.fail(null);
      // The lease of the failed attempt runs out; the chunk is claimed again and completed.
      h.advance(h.runtime.ctx.config.batch.leaseMs + 1);
      while (await worker.runOnce());
    } finally {
      await worker.stop();
    }
    const job = await h.job(h.testKey, jobId);
    expect(job.json()).toMatchObject({ status: 'completed', total: 25, processed: 25 });
    const rows = (await h.results(h.testKey, jobId, 'json')).json<{ results: { index: number }[] }>().results;
    expect(rows.map((r) => r.index)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });
});
