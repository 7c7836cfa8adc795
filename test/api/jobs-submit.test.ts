import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJobsHarness, fixtureEmails, type JobsHarness, type ResultsJson } from '../jobs/kit.js';

let h: JobsHarness;
beforeEach(async () => {
  h = await createJobsHarness({ flags: { chunkSize: '10' } });
});
afterEach(async () => {
  await h.close();
});

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
    });
    expect(json.results[3]!.reason).toBe('invalid_email_format');
    expect({ ...json.results[0], index: 1 }).toEqual(json.results[1]);
  });
});
