import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOUR, SECOND } from '../../src/clock.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import { createJobsHarness, fixtureEmails, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';

let h: JobsHarness;
beforeEach(async () => {
  h = await createJobsHarness({ flags: { chunkSize: '10', publicBaseUrl: 'https://verify.example.net' } });
});
afterEach(async () => {
  await h.close();
});

async function submitted(key: string, emails: string[]): Promise<string> {
  const res = await h.submit(key, { emails, notify_email: false });
  expect(res.statusCode).toBe(202);
  return res.json<{ job_id: string }>().job_id;
}

describe('GET /v1/jobs/:id', () => {
  it('shows a queued job without progress fields', async () => {
    const id = await submitted(h.testKey, fixtureEmails(25));
    const res = await h.job(h.testKey, id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      job_id: id,
      status: 'queued',
      total: 25,
      created_at: '2026-03-10T12:00:00.000Z',
      results_expire_at: '2026-03-13T12:00:00.000Z',
      request_id: res.headers['x-request-id'],
    });
  });

  it('shows processed growing while the job runs, never going back', async () => {
    const id = await submitted(h.testKey, fixtureEmails(25));
    const seen: number[] = [];
    while (await h.worker.runOnce()) {
      const job = (await h.job(h.testKey, id)).json<{ status: string; processed: number }>();
      seen.push(job.processed);
      if (job.status === 'processing') expect(job).not.toHaveProperty('valid');
    }
    expect(seen).toEqual([10, 20, 25]);
  });

  it('shows a completed job with counts, completed_at and an absolute download_url', async () => {
    const id = await submitted(h.testKey, fixtureEmails(25));
    h.advance(5 * SECOND);
    await h.drain();
    const res = await h.job(h.testKey, id);
    // fixtureEmails cycles valid / invalid / disposable / other: 7 valid, 6 undeliverable.
    expect(res.json()).toEqual({
      job_id: id,
      status: 'completed',
      total: 25,
      processed: 25,
      valid: 7,
      invalid: 6,
      created_at: '2026-03-10T12:00:00.000Z',
      completed_at: '2026-03-10T12:00:05.000Z',
      results_expire_at: '2026-03-13T12:00:00.000Z',
      download_url: `https://verify.example.net/v1/jobs/${id}/results`,
      request_id: res.headers['x-request-id'],
    });
  });

  it('answers 404 not_found with identical bodies for an unknown id and another account’s job', async () => {
    const other = await h.createOtherAccount();
    const theirs = await submitted(other.testKey, ['a@b.co']);
    const a = await h.job(h.testKey, theirs);
    const b = await h.job(h.testKey, 'job_doesnotexist0000000');
    expect(a.statusCode).toBe(404);
    expect(b.statusCode).toBe(404);
    const strip = (r: typeof a) => ({
      ...r.json<{ error: string; message: string }>(),
      request_id: undefined,
    });
    expect(strip(a)).toEqual(strip(b));
    expect(strip(a).error).toBe('not_found');
    expect((await h.results(h.testKey, theirs)).statusCode).toBe(404);
  });

  it('needs the jobs:read scope', async () => {
    const { createKey } = await import('../../src/services/keys/keys.service.js');
    const key = await createKey(h.runtime.ctx.db, h.clock, {
      accountId: h.accountId,
      kind: 'test',
      scopes: ['verify'],
    });
    const id = await submitted(h.testKey, ['a@b.co']);
    const res = await h.job(key.key, id);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('insufficient_permissions');
  });
});

describe('GET /v1/jobs/:id/results', () => {
  it('answers 409 job_not_ready before completion', async () => {
    const id = await submitted(h.testKey, fixtureEmails(25));
    expect((await h.results(h.testKey, id)).json().error).toBe('job_not_ready');
    await h.worker.runOnce();
    const res = await h.results(h.testKey, id, 'json');
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('job_not_ready');
  });

  it('streams CSV with RFC 4180 quoting, an empty reason for null, in submission order', async () => {
    const emails = ['"a,b\\"c"@valid.example.com', 'z@invalid.example.com', 'plain@valid.example.com', 'x@y'];
    const id = await submitted(h.testKey, emails);
    await h.drain();
    const res = await h.results(h.testKey, id);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${id}.csv"`);
    expect(res.body).toBe(
      [
        'email,status,score,reason',
        '"""a,b\\""c""@valid.example.com",deliverable,99,',
        'z@invalid.example.com,undeliverable,0,smtp_rejected',
        'plain@valid.example.com,deliverable,99,',
        'x@y,undeliverable,0,invalid_email_format',
        '',
      ].join('\r\n'),
    );
  });

  it('gives the JSON form with index, email, status, score, reason across many chunks', async () => {
    const emails = fixtureEmails(95);
    const id = await submitted(h.testKey, emails);
    await h.drain();
    const res = await h.results(h.testKey, id, 'json');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json<ResultsJson>();
    expect(body.job_id).toBe(id);
    expect(body.request_id).toBe(res.headers['x-request-id']);
    expect(body.results.map((r) => r.index)).toEqual(emails.map((_, i) => i));
    expect(body.results.map((r) => r.email)).toEqual(emails);
    expect(body.results[0]).toEqual({
      index: 0,
      email: emails[0],
      status: 'deliverable',
      score: 99,
      reason: null,
      // Test keys' fixed results name no provider.
      provider: null,
    });
    expect(body.results[1]).toMatchObject({ status: 'undeliverable', reason: 'smtp_rejected' });
    expect(body.results[2]).toMatchObject({ status: 'risky', reason: 'disposable_domain' });
  });

  it('writes chunks larger than a piece of the body whole and in order, in both formats', async () => {
    // The body is written 100 rows at a time (api/results-body.ts): 250-address chunks span pieces.
    const big = await createJobsHarness({ flags: { chunkSize: '250' } });
    try {
      const emails = fixtureEmails(260);
      const res = await big.submit(big.testKey, { emails, notify_email: false });
      const id = res.json<{ job_id: string }>().job_id;
      await big.drain();
      const lines = (await big.results(big.testKey, id)).body.split('\r\n');
      expect(lines.slice(1, -1).map((line) => line.split(',')[0])).toEqual(emails);
      const json = (await big.results(big.testKey, id, 'json')).json<ResultsJson>();
      expect(json.results.map((r) => [r.index, r.email])).toEqual(emails.map((e, i) => [i, e]));
    } finally {
      await big.close();
    }
  });

  it('gives each JSON row its result’s provider, and keeps the CSV to its four columns', async () => {
    const live = await createJobsHarness({
      flags: { chunkSize: '10' },
      account: { plan: 'free' },
      // Live rows as the engine's results give them (chunk-verifier's toRow), without probing.
      verifyChunk: async (_mode, emails) =>
        emails.map((_, i) => ({
          status: 'deliverable' as const,
          score: 95,
          reason: null,
          valid: true,
          provider: i % 2 === 0 ? ('microsoft' as const) : null,
        })),
    });
    try {
      const emails = fixtureEmails(12);
      const res = await live.submit(live.liveKey, { emails, notify_email: false });
      const id = res.json<{ job_id: string }>().job_id;
      await live.drain();
      const rows = (await live.results(live.liveKey, id, 'json')).json<ResultsJson>().results;
      expect(rows.map((r) => r.provider)).toEqual(emails.map((_, i) => (i % 2 === 0 ? 'microsoft' : null)));
      const csv = (await live.results(live.liveKey, id)).body.split('\r\n');
      expect(csv[0]).toBe('email,status,score,reason');
      expect(csv[1]).toBe(`${emails[0]},deliverable,95,`);
    } finally {
      await live.close();
    }
  });

  it('refuses an unknown format with 422', async () => {
    const id = await submitted(h.testKey, ['a@b.co']);
    const res = await h.inject({
      method: 'GET',
      url: `/v1/jobs/${id}/results?format=xml`,
      headers: { authorization: `Bearer ${h.testKey}` },
    });
    expect(res.statusCode).toBe(422);
  });
});

describe('retention', () => {
  it('answers 410 results_expired once results_expire_at has passed, before any sweep, and drops download_url', async () => {
    const id = await submitted(h.testKey, fixtureEmails(12));
    await h.drain();
    h.advance(72 * HOUR - 1);
    expect((await h.results(h.testKey, id)).statusCode).toBe(200);
    expect((await h.job(h.testKey, id)).json()).toHaveProperty('download_url');
    h.advance(1);
    const res = await h.results(h.testKey, id);
    expect(res.statusCode).toBe(410);
    expect(res.json().error).toBe('results_expired');
    const job = (await h.job(h.testKey, id)).json();
    expect(job.status).toBe('completed');
    expect(job).not.toHaveProperty('download_url');
  });

  it('sweeps the chunks of expired jobs and keeps their metadata, so results stay 410 and the job readable', async () => {
    const expired = await submitted(h.testKey, fixtureEmails(12));
    await h.drain();
    h.advance(1 * HOUR);
    const fresh = await submitted(h.testKey, fixtureEmails(12));
    await h.drain();
    h.advance(71 * HOUR + 1);
    const report = await sweepOnce(h.runtime.ctx.db, h.clock);
    expect(report).toMatchObject({ jobs: 1, chunks: 2 });
    const left = await h.runtime.ctx.db.selectFrom('job_chunks').select('job_id').distinct().execute();
    expect(left.map((r) => r.job_id)).toEqual([fresh]);
    expect((await h.results(h.testKey, expired)).statusCode).toBe(410);
    expect((await h.job(h.testKey, expired)).json().total).toBe(12);
    expect((await h.results(h.testKey, fresh)).statusCode).toBe(200);
    expect((await sweepOnce(h.runtime.ctx.db, h.clock)).jobs).toBe(0);
  });

  it('honours a short configured retention', async () => {
    const short = await createJobsHarness({ flags: { resultRetention: '2s' } });
    try {
      const res = await short.submit(short.testKey, { emails: ['a@valid.example.com'] });
      expect(res.json().results_expire_at).toBe('2026-03-10T12:00:02.000Z');
      await short.drain();
      expect((await short.results(short.testKey, res.json().job_id)).statusCode).toBe(200);
      short.advance(2 * SECOND);
      expect((await short.results(short.testKey, res.json().job_id)).statusCode).toBe(410);
    } finally {
      await short.close();
    }
  });
});

describe('GET /v1/jobs', () => {
  it('lists the account’s jobs newest first with cursor pagination', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await submitted(h.testKey, [`n${i}@b.co`]));
      h.advance(SECOND);
    }
    const other = await h.createOtherAccount();
    await submitted(other.testKey, ['theirs@b.co']);
    const list = async (query: string) =>
      (
        await h.inject({
          method: 'GET',
          url: `/v1/jobs${query}`,
          headers: { authorization: `Bearer ${h.testKey}` },
        })
      ).json<{
        jobs: { job_id: string }[];
        next_cursor: string | null;
      }>();
    const p1 = await list('?limit=2');
    expect(p1.jobs.map((j) => j.job_id)).toEqual([ids[4], ids[3]]);
    const p2 = await list(`?limit=2&cursor=${p1.next_cursor}`);
    expect(p2.jobs.map((j) => j.job_id)).toEqual([ids[2], ids[1]]);
    const p3 = await list(`?limit=2&cursor=${p2.next_cursor}`);
    expect(p3.jobs.map((j) => j.job_id)).toEqual([ids[0]]);
    expect(p3.next_cursor).toBeNull();
    expect((await list('')).jobs).toHaveLength(5);
  });

  it('refuses a cursor it did not issue', async () => {
    const res = await h.inject({
      method: 'GET',
      url: '/v1/jobs?cursor=bogus',
      headers: { authorization: `Bearer ${h.testKey}` },
    });
    expect(res.statusCode).toBe(422);
  });
});

describe('DELETE /v1/jobs/:id', () => {
  const cancel = (key: string, id: string) =>
    h.inject({ method: 'DELETE', url: `/v1/jobs/${id}`, headers: { authorization: `Bearer ${key}` } });

  it('cancels a processing job: failed with error cancelled, unprocessed addresses refunded', async () => {
    const live = await createJobsHarness({
      flags: { chunkSize: '10' },
      account: { plan: 'free' },
      // Live jobs verified offline: this test is about counting, not probing.
      verifyChunk: async (_mode, emails) =>
        emails.map(() => ({
          status: 'deliverable' as const,
          score: 90,
          reason: null,
          valid: true,
          provider: null,
        })),
    });
    try {
      const res = await live.submit(live.liveKey, { emails: fixtureEmails(35), notify_email: false });
      const id = res.json<{ job_id: string }>().job_id;
      await live.worker.runOnce();
      await live.worker.runOnce();
      expect((await live.usage(live.liveKey)).json().quota.used).toBe(35);
      const c = await live.inject({
        method: 'DELETE',
        url: `/v1/jobs/${id}`,
        headers: { authorization: `Bearer ${live.liveKey}` },
      });
      expect(c.statusCode).toBe(200);
      expect(c.json()).toMatchObject({ job_id: id, status: 'failed', error: 'cancelled', processed: 20 });
      expect((await live.usage(live.liveKey)).json().quota.used).toBe(20);
      // The worker leaves the rest alone.
      expect(await live.drain()).toBe(0);
      expect((await live.job(live.liveKey, id)).json()).toMatchObject({ status: 'failed', processed: 20 });
      expect((await live.results(live.liveKey, id)).json().error).toBe('job_not_ready');
    } finally {
      await live.close();
    }
  });

  it('cancels a queued job', async () => {
    const id = await submitted(h.testKey, fixtureEmails(5));
    const res = await cancel(h.testKey, id);
    expect(res.json()).toMatchObject({ status: 'failed', error: 'cancelled' });
  });

  it('refuses to cancel a completed job with 409 job_not_cancellable', async () => {
    const id = await submitted(h.testKey, fixtureEmails(5));
    await h.drain();
    const res = await cancel(h.testKey, id);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('job_not_cancellable');
    expect((await cancel(h.testKey, 'job_nope')).statusCode).toBe(404);
  });
});
