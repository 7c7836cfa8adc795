import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sweepOnce } from '../../src/jobs/sweep.js';
import { createJobsHarness, fixtureEmails, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';

let h: JobsHarness;
beforeEach(async () => {
  // The free plan: 1,000 verifications a month, no overage.
  h = await createJobsHarness({ flags: { chunkSize: '10' }, account: { plan: 'free' } });
});
afterEach(async () => {
  await h.close();
});

async function used(): Promise<number> {
  return (await h.usage(h.liveKey)).json<{ quota: { used: number } }>().quota.used;
}

async function jobCount(): Promise<number> {
  const rows = await h.runtime.ctx.db.selectFrom('jobs').select('id').execute();
  return rows.length;
}

describe('POST /v1/verify/batch', () => {
  it('answers 202 with the submission object', async () => {
    const res = await h.submit(h.testKey, { emails: fixtureEmails(25) });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      ['created_at', 'job_id', 'request_id', 'results_expire_at', 'status', 'total'].sort(),
    );
    expect(body.job_id).toMatch(/^job_[0-9A-Za-z]{20}$/);
    expect(body.status).toBe('queued');
    expect(body.total).toBe(25);
    expect(body.created_at).toBe('2026-03-10T12:00:00.000Z');
    expect(body.results_expire_at).toBe('2026-03-13T12:00:00.000Z');
    expect(body.request_id).toBe(res.headers['x-request-id']);
  });

  it('counts duplicates and malformed strings in total, and gives each its own row', async () => {
    const emails = [
      'a@valid.example.com',
      'a@valid.example.com',
      'not an address',
      '',
      'b@invalid.example.com',
    ];
    const res = await h.submit(h.testKey, { emails });
    expect(res.json().total).toBe(5);
    await h.drain();
    const json = (await h.results(h.testKey, res.json().job_id, 'json')).json<ResultsJson>();
    expect(json.results.map((r) => r.email)).toEqual(emails);
    expect(json.results[2]).toEqual({
      index: 2,
      email: 'not an address',
      status: 'undeliverable',
      score: 0,
      reason: 'invalid_email_format',
      provider: null,
    });
    expect(json.results[3]!.reason).toBe('invalid_email_format');
    expect({ ...json.results[0], index: 1 }).toEqual(json.results[1]);
  });

  it.each([
    ['a missing emails field', {}, 'emails'],
    ['emails that is not an array', { emails: 'a@b.c' }, 'emails'],
    ['an empty list', { emails: [] }, 'emails'],
    ['a non-string entry', { emails: ['a@valid.example.com', 42] }, 'emails.1'],
    ['a null entry', { emails: [null] }, 'emails.0'],
    ['more than 500,000 entries', { emails: Array.from({ length: 500_001 }, () => 'a@b.co') }, 'emails'],
    ['a webhook_url that is not a string', { emails: ['a@b.co'], webhook_url: 5 }, 'webhook_url'],
    ['a notify_email that is not a boolean', { emails: ['a@b.co'], notify_email: 'yes' }, 'notify_email'],
  ])('refuses %s with 422 invalid_request naming the field', async (_name, body, field) => {
    const res = await h.submit(h.testKey, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('invalid_request');
    expect(res.json().message).toContain(field);
    expect(await jobCount()).toBe(0);
  });

  it.each([
    ['http://', 'http://hooks.example.net/x', 'https://'],
    ['loopback', 'https://127.0.0.1/hook', 'internal'],
    ['a private address', 'https://10.1.2.3/hook', 'internal'],
    ['the metadata address', 'https://169.254.169.254/latest', 'internal'],
    ['IPv6 loopback', 'https://[::1]/hook', 'internal'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', 'internal'],
    ['a name resolving to loopback', 'https://localhost/hook', 'internal'],
    ['not a URL', 'hooks', 'URL'],
  ])('refuses a webhook_url to %s with 422', async (_name, url, words) => {
    const res = await h.submit(h.testKey, { emails: ['a@b.co'], webhook_url: url });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('invalid_request');
    expect(res.json().message).toContain(words);
  });

  it('accepts a public https webhook_url', async () => {
    const res = await h.submit(h.testKey, { emails: ['a@b.co'], webhook_url: 'https://93.184.215.14/hook' });
    expect(res.statusCode).toBe(202);
  });

  it('counts one verification per address for a live key, duplicates included', async () => {
    const res = await h.submit(h.liveKey, { emails: ['a@b.co', 'a@b.co', 'junk'] });
    expect(res.statusCode).toBe(202);
    expect(await used()).toBe(3);
  });

  it('does not count a test-key batch', async () => {
    await h.submit(h.testKey, { emails: fixtureEmails(50) });
    expect(await used()).toBe(0);
  });

  it('refuses a batch larger than the remaining quota with 429, storing and counting nothing', async () => {
    expect((await h.submit(h.liveKey, { emails: fixtureEmails(400) })).statusCode).toBe(202);
    const res = await h.submit(h.liveKey, { emails: fixtureEmails(601) });
    expect(res.statusCode).toBe(429);
    expect(res.json().error).toBe('quota_exceeded');
    expect(await used()).toBe(400);
    expect(await jobCount()).toBe(1);
    const chunks = await h.runtime.ctx.db.selectFrom('job_chunks').select('job_id').distinct().execute();
    expect(chunks).toHaveLength(1);
    // Exactly what remains still fits.
    expect((await h.submit(h.liveKey, { emails: fixtureEmails(600) })).statusCode).toBe(202);
  });

  it('never overspends under concurrent submissions', async () => {
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => h.submit(h.liveKey, { emails: fixtureEmails(300) })),
    );
    const accepted = responses.filter((r) => r.statusCode === 202).length;
    expect(accepted).toBe(3);
    expect(responses.filter((r) => r.statusCode === 429)).toHaveLength(5);
    expect(await used()).toBe(900);
    expect(await jobCount()).toBe(3);
  });
});

describe('Idempotency-Key', () => {
  const body = { emails: fixtureEmails(30), notify_email: false };

  it('returns the same job for the same key and body, counting once', async () => {
    const first = await h.submit(h.liveKey, body, { 'idempotency-key': 'k-1' });
    const second = await h.submit(h.liveKey, body, { 'idempotency-key': 'k-1' });
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.json().job_id).toBe(first.json().job_id);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().request_id).not.toBe(first.json().request_id);
    expect(await jobCount()).toBe(1);
    expect(await used()).toBe(30);
  });

  it('returns one job to concurrent submissions with the same key', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => h.submit(h.liveKey, body, { 'idempotency-key': 'same-time' })),
    );
    expect(responses.map((r) => r.statusCode)).toEqual([202, 202, 202, 202, 202, 202]);
    expect(new Set(responses.map((r) => r.json<{ job_id: string }>().job_id)).size).toBe(1);
    expect(await jobCount()).toBe(1);
    expect(await used()).toBe(30);
  });

  it('refuses the same key with a different body: 422 idempotency_key_reused', async () => {
    await h.submit(h.liveKey, body, { 'idempotency-key': 'k-2' });
    const res = await h.submit(h.liveKey, { ...body, notify_email: true }, { 'idempotency-key': 'k-2' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('idempotency_key_reused');
    expect(await jobCount()).toBe(1);
    expect(await used()).toBe(30);
  });

  it('treats a body with defaults spelled out as the same body', async () => {
    const a = await h.submit(h.testKey, { emails: ['x@b.co'] }, { 'idempotency-key': 'k-3' });
    const b = await h.submit(
      h.testKey,
      { emails: ['x@b.co'], notify_email: true },
      { 'idempotency-key': 'k-3' },
    );
    expect(b.json().job_id).toBe(a.json().job_id);
  });

  it('is scoped to the account', async () => {
    const other = await h.createOtherAccount();
    const a = await h.submit(h.testKey, body, { 'idempotency-key': 'shared' });
    const b = await h.submit(other.testKey, body, { 'idempotency-key': 'shared' });
    expect(b.statusCode).toBe(202);
    expect(b.json().job_id).not.toBe(a.json().job_id);
  });

  it('expires after 24 hours: the key then starts a new job', async () => {
    const a = await h.submit(h.testKey, body, { 'idempotency-key': 'old' });
    h.advance(24 * 3600_000 + 1);
    const b = await h.submit(h.testKey, { emails: ['other@b.co'] }, { 'idempotency-key': 'old' });
    expect(b.statusCode).toBe(202);
    expect(b.json().job_id).not.toBe(a.json().job_id);
  });

  it('is deleted by the sweep once expired', async () => {
    await h.submit(h.testKey, body, { 'idempotency-key': 'swept' });
    const keys = () => h.runtime.ctx.db.selectFrom('idempotency_keys').select('key').execute();
    expect(await sweepOnce(h.runtime.ctx.db, h.clock)).toMatchObject({ idempotencyKeys: 0 });
    h.advance(24 * 3600_000);
    expect(await sweepOnce(h.runtime.ctx.db, h.clock)).toMatchObject({ idempotencyKeys: 1 });
    expect(await keys()).toEqual([]);
  });

  it('refuses a key that is too long', async () => {
    const res = await h.submit(h.testKey, body, { 'idempotency-key': 'x'.repeat(256) });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('invalid_request');
  });
});
