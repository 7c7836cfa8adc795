/** The client against a real `mailverdict serve` (client-kit.ts). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Mailverdict,
  MailverdictError,
  isMailverdictError,
  type RetryInfo,
  type ResultRow,
} from '../src/index.js';
import { notABounce, postfixHardBounce } from '../../../test/kit/bounce-corpus.js';
import { startServer, type Server } from './client-kit.js';

let server: Server;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const client = (options: Partial<ConstructorParameters<typeof Mailverdict>[0]> = {}) =>
  new Mailverdict({ apiKey: server.testKey, baseUrl: server.url, ...options });

/** Rejections of `promises`, once all have settled. */
async function rejections(promises: Promise<unknown>[]): Promise<unknown[]> {
  const settled = await Promise.allSettled(promises);
  return settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
}

describe('verify', () => {
  it('returns the typed result of a test key', async () => {
    const result = await client().verify({ email: 'anna@valid.example.com', include_checks: false });
    expect(result).toMatchObject({ status: 'deliverable', valid: true, score: 99, reason: null });
    expect(result.request_id).toMatch(/^req_/);
  });

  it('throws a MailverdictError with the code, status and request id on a bad key', async () => {
    const bad = client({ apiKey: `svc_test_${'x'.repeat(40)}` });
    const error = await bad.verify({ email: 'anna@valid.example.com' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MailverdictError);
    expect(isMailverdictError(error, 'invalid_api_key')).toBe(true);
    const e = error as MailverdictError;
    expect(e.status).toBe(401);
    expect(e.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(e.retryAfter).toBeNull();
    expect(e.isKnownCode()).toBe(true);
  });

  it('throws invalid_email_format (422) for a malformed address, without retrying it', async () => {
    const retries: RetryInfo[] = [];
    const error = await client({ retry: { onRetry: (r) => retries.push(r) } })
      .verify({ email: 'not an address' })
      .catch((e: unknown) => e);
    expect(isMailverdictError(error, 'invalid_email_format')).toBe(true);
    expect((error as MailverdictError).status).toBe(422);
    expect(retries).toEqual([]);
  });
});

describe('retries', () => {
  // The bootstrap account is on the free plan: 5 requests a second (docs/api.md#rate-limit).
  const burst = 12;

  it('without retries, a burst over the rate limit gets rate_limit_exceeded with its Retry-After', async () => {
    const once = client({ retry: false });
    const errors = await rejections(
      Array.from({ length: burst }, () => once.verify({ email: 'anna@valid.example.com' })),
    );
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(isMailverdictError(error, 'rate_limit_exceeded')).toBe(true);
      expect((error as MailverdictError).status).toBe(429);
      expect((error as MailverdictError).retryAfter).toBeGreaterThanOrEqual(1);
    }
  });

  it('with retries, every request of the burst succeeds after waiting what Retry-After says', async () => {
    const retries: RetryInfo[] = [];
    const patient = client({ retry: { retries: 10, onRetry: (r) => retries.push(r) } });
    const results = await Promise.all(
      Array.from({ length: burst }, () => patient.verify({ email: 'anna@valid.example.com' })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(burst).fill('deliverable'));
    expect(retries.length).toBeGreaterThan(0);
    for (const r of retries) {
      const error = r.error as MailverdictError;
      expect(error.code).toBe('rate_limit_exceeded');
      expect(r.delayMs).toBe(error.retryAfter! * 1000);
    }
  });

  it('a retried batch submission sends the same Idempotency-Key and makes one job', async () => {
    const sent: { key: string | null; status: number }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      sent.push({ key: request.headers.get('idempotency-key'), status: response.status });
      return response;
    };
    const patient = client({ fetch: recording, retry: { retries: 10 } });
    // Use up the second, then submit: the submission waits for its turn.
    const usage = await Promise.allSettled(
      Array.from({ length: burst }, () => client({ retry: false }).usage()),
    );
    expect(usage.some((u) => u.status === 'rejected')).toBe(true);
    const accepted = await patient.submitBatch({ emails: ['anna@valid.example.com'], notify_email: false });
    expect(sent.map((s) => s.status)).toContain(429);
    expect(sent.at(-1)!.status).toBe(202);
    expect(new Set(sent.map((s) => s.key)).size).toBe(1);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    const jobs = await client({ retry: { retries: 10 } }).listJobs({ limit: 100 });
    expect(jobs.jobs.filter((j) => j.job_id === accepted.job_id)).toHaveLength(1);
  });
});

describe('batch', () => {
  const emails = [
    'anna@valid.example.com',
    'bob@invalid.example.com',
    'carl@disposable.example.com',
    'not an address',
  ];

  it('submits, waits with back-off and streams the rows in submission order', async () => {
    const mv = client({ retry: { retries: 10 } });
    const polls: string[] = [];
    const accepted = await mv.submitBatch({ emails, notify_email: false });
    expect(accepted).toMatchObject({ status: 'queued', total: 4 });
    const job = await mv.waitForJob(accepted.job_id, {
      initialIntervalMs: 100,
      timeoutMs: 50_000,
      onPoll: (j) => polls.push(j.status),
    });
    expect(job).toMatchObject({ job_id: accepted.job_id, status: 'completed', total: 4, processed: 4 });
    expect(polls.at(-1)).toBe('completed');
    const rows: ResultRow[] = [];
    for await (const row of mv.results(job.job_id)) rows.push(row);
    expect(rows.map((r) => [r.index, r.email, r.status, r.reason])).toEqual([
      [0, 'anna@valid.example.com', 'deliverable', null],
      [1, 'bob@invalid.example.com', 'undeliverable', 'smtp_rejected'],
      [2, 'carl@disposable.example.com', 'risky', 'disposable_domain'],
      [3, 'not an address', 'undeliverable', 'invalid_email_format'],
    ]);
  });

  it('the same Idempotency-Key and body give the same job back', async () => {
    const mv = client({ retry: { retries: 10 } });
    const key = `client-test-${Date.now()}`;
    const first = await mv.submitBatch({ emails, notify_email: false }, { idempotencyKey: key });
    const again = await mv.submitBatch({ emails, notify_email: false }, { idempotencyKey: key });
    expect(again.job_id).toBe(first.job_id);
    const other = await mv
      .submitBatch({ emails: ['x@valid.example.com'], notify_email: false }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(isMailverdictError(other, 'idempotency_key_reused')).toBe(true);
  });

  it('results of an unknown job throw not_found', async () => {
    const rows = client({ retry: { retries: 10 } }).results('job_doesnotexist');
    await expect(rows.next()).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('outcomes and filters', () => {
  const live = () => client({ apiKey: server.liveKey, retry: { retries: 10 } });

  it('reports outcomes with the refused ones listed, and erases an address', async () => {
    const mv = live();
    const taken = await mv.reportOutcomes({
      events: [
        { email: 'gone@client-outcomes.test', type: 'hard_bounce', at: '2026-01-05T08:00:00Z' },
        { email: 'gone@client-outcomes.test', type: 'not_a_type' },
      ],
    });
    expect(taken).toMatchObject({
      taken: 1,
      duplicates: 0,
      refused: 1,
      refusals: [{ index: 1, reason: 'invalid_type' }],
    });
    expect(await mv.eraseOutcomes('gone@client-outcomes.test')).toMatchObject({ deleted: 1 });
    const bad = await mv.eraseOutcomes('not an address').catch((e: unknown) => e);
    expect(isMailverdictError(bad, 'invalid_email_format')).toBe(true);
  });

  it("reads the accuracy report of the account's verdicts, and refuses a period that does not parse", async () => {
    const mv = live();
    const report = await mv.outcomesReport({ from: '2026-01-01' });
    expect(report.from).toBe('2026-01-01T00:00:00.000Z');
    expect(report.by_score_band).toHaveLength(5);
    expect(report.reliability).toHaveLength(10);
    const bad = await mv.outcomesReport({ from: 'last week' }).catch((e: unknown) => e);
    expect(isMailverdictError(bad, 'invalid_request')).toBe(true);
  });

  it('reports a raw bounce message, and refuses one that is not a bounce with not_a_bounce', async () => {
    const mv = live();
    const bounce = postfixHardBounce({ rcpt: 'gone@client-messages.test' });
    const taken = await mv.reportOutcomeMessage(new TextEncoder().encode(bounce));
    expect(taken).toMatchObject({
      kind: 'dsn',
      taken: 1,
      duplicates: 0,
      events: [{ email: 'gone@client-messages.test', type: 'hard_bounce', status: '5.1.1' }],
    });
    expect(await mv.reportOutcomeMessage(bounce)).toMatchObject({ taken: 1, duplicates: 1 });
    const refused = await mv
      .reportOutcomeMessage(notABounce({ rcpt: 'gone@client-messages.test' }))
      .catch((e: unknown) => e);
    expect(isMailverdictError(refused, 'not_a_bounce')).toBe(true);
  });

  it('adds, lists and deletes a filter; a deleted one is not_found', async () => {
    const mv = live();
    const added = await mv.addFilter({ action: 'block', match: 'domain', value: '@Client-Filters.TEST' });
    expect(added).toMatchObject({ action: 'block', match: 'domain', value: 'client-filters.test' });
    expect((await mv.listFilters()).filters.map((f) => f.id)).toContain(added.id);
    expect(await mv.deleteFilter(added.id)).toMatchObject({ id: added.id, deleted: true });
    const again = await mv.deleteFilter(added.id).catch((e: unknown) => e);
    expect(isMailverdictError(again, 'not_found')).toBe(true);
    expect((await mv.listFilters()).filters.map((f) => f.id)).not.toContain(added.id);
  });
});

describe('outcome sources', () => {
  it('connects a mail system with its URL shown once, lists it, and deletes it', async () => {
    const mv = client({ apiKey: server.liveKey, retry: { retries: 10 } });
    const made = await mv.createOutcomeSource({ provider: 'postmark', label: 'client test' });
    expect(made.url).toMatch(/\/hooks\/outcomes\/osrc_[0-9A-Za-z]{16}\/[0-9A-Za-z]{32}$/);
    expect(made.basic_auth?.username).toBe('mailverdict');
    const { sources } = await mv.listOutcomeSources();
    expect(sources.find((s) => s.id === made.id)).toMatchObject({
      provider: 'postmark',
      label: 'client test',
    });
    expect(await mv.deleteOutcomeSource(made.id)).toMatchObject({ id: made.id, deleted: true });
    const bad = await mv.createOutcomeSource({ provider: 'sendgrid' }).catch((e: unknown) => e);
    expect(isMailverdictError(bad, 'invalid_request')).toBe(true);
  });
});
