/**
 * The overview and the dashboard's live verification: usage as GET /v1/account/usage tells it,
 * verifications per day (single and batch) counted with the quota and given back by a cancel,
 * every day of the current and previous billing period, the latest jobs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY } from '../../src/clock.js';
import type { JobItem, Overview } from '../../src/dashboard/contract.js';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness;
let browser: Browser;
beforeEach(async () => {
  // The account is created on 2026-03-10: periods run from the 10th to the 10th.
  h = await createDashboardHarness({
    flags: { plans: '{"free":{"monthly_quota":50}}', sessionIdleTimeout: '4d' },
  });
  ({ browser } = await h.signedIn());
  h.dns.setNxdomain('nowhere.example');
}, SLOW.timeout);
afterEach(async () => {
  await h.close();
});

async function overview(): Promise<Overview> {
  const res = await browser.get(`${API}/overview`);
  expect(res.statusCode).toBe(200);
  return res.json<Overview>();
}

function day(o: Overview, date: string) {
  return o.daily.current.find((d) => d.date === date);
}

describe('dashboard overview', SLOW, () => {
  it('covers every day of the current and the previous period, zeros included', async () => {
    const o = await overview();
    expect(o.daily.current).toHaveLength(31);
    expect(o.daily.current[0]).toEqual({ date: '2026-03-10', single: 0, batch: 0 });
    expect(o.daily.current.at(-1)!.date).toBe('2026-04-09');
    expect(o.daily.previous).toHaveLength(28);
    expect(o.daily.previous[0]!.date).toBe('2026-02-10');
    expect(o.daily.previous.at(-1)!.date).toBe('2026-03-09');
    expect(o.usage).toMatchObject({
      plan: 'free',
      period_start: '2026-03-10T00:00:00.000Z',
      quota: { limit: 50, used: 0, remaining: 50 },
    });
  });

  it('counts the dashboard’s own verification as one live single verification', async () => {
    const res = await browser.post('verify', { email: 'ann@nowhere.example' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      email: 'ann@nowhere.example',
      status: 'undeliverable',
      reason: 'domain_not_found',
    });
    const o = await overview();
    expect(o.usage.quota.used).toBe(1);
    expect(day(o, '2026-03-10')).toEqual({ date: '2026-03-10', single: 1, batch: 0 });
  });

  it('refuses a malformed address without counting it', async () => {
    const res = await browser.post('verify', { email: 'not an address' });
    expect(res.statusCode).toBe(422);
    expect(errorCode(res)).toBe('invalid_email_format');
    expect((await overview()).usage.quota.used).toBe(0);
  });

  it('puts v1 verifications and batches on the day they were counted, singles and batches apart', async () => {
    await h.v1('POST', '/v1/verify', h.liveKey, { email: 'ann@nowhere.example' });
    h.manualClock.advance(DAY);
    await h.v1('POST', '/v1/verify', h.liveKey, { email: 'bob@nowhere.example' });
    await h.v1('POST', '/v1/verify/batch', h.liveKey, {
      emails: ['a@nowhere.example', 'b@nowhere.example', 'c@nowhere.example'],
    });
    // Test keys never count.
    await h.v1('POST', '/v1/verify', h.testKey, { email: 'ann@valid.example.com' });
    const o = await overview();
    expect(day(o, '2026-03-10')).toEqual({ date: '2026-03-10', single: 1, batch: 0 });
    expect(day(o, '2026-03-11')).toEqual({ date: '2026-03-11', single: 1, batch: 3 });
    const sum = o.daily.current.reduce((n, d) => n + d.single + d.batch, 0);
    expect(sum).toBe(o.usage.quota.used);
  });

  it('gives a cancelled job’s unprocessed addresses back to the day it was counted on', async () => {
    const { job_id } = (
      await h.v1('POST', '/v1/verify/batch', h.liveKey, {
        emails: ['a@nowhere.example', 'b@nowhere.example'],
      })
    ).json<{ job_id: string }>();
    h.manualClock.advance(DAY);
    expect((await browser.post(`jobs/${job_id}/cancel`)).statusCode).toBe(200);
    const o = await overview();
    expect(day(o, '2026-03-10')).toEqual({ date: '2026-03-10', single: 0, batch: 0 });
    expect(o.usage.quota.used).toBe(0);
  });

  it('leaves the days unchanged when the quota refuses', async () => {
    const emails = Array.from({ length: 51 }, (_, i) => `u${i}@nowhere.example`);
    const res = await h.v1('POST', '/v1/verify/batch', h.liveKey, { emails });
    expect(res.statusCode).toBe(429);
    expect(day(await overview(), '2026-03-10')).toEqual({ date: '2026-03-10', single: 0, batch: 0 });
  });

  it('shows the latest five jobs, newest first', async () => {
    for (let i = 0; i < 6; i++) {
      await h.v1('POST', '/v1/verify/batch', h.testKey, { emails: [`u${i}@valid.example.com`] });
      h.manualClock.advance(1000);
    }
    const jobs: JobItem[] = (await overview()).latest_jobs;
    expect(jobs).toHaveLength(5);
    expect(jobs.map((j) => j.created_at)).toEqual([...jobs.map((j) => j.created_at)].sort().reverse());
  });
});
