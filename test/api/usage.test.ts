import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, DAY } from '../../src/clock.js';
import { getUsageHistory } from '../../src/services/usage/usage.service.js';
import { createHarness, type Harness } from '../kit/api-harness.js';

describe('GET /v1/account/usage', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('answers every contract field with its type for a free account', async () => {
    h = await createHarness({ account: { plan: 'free' } });
    const res = await h.usage(h.testKey);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toEqual({
      plan: 'free',
      period_start: '2026-03-10T00:00:00.000Z',
      period_end: '2026-04-10T00:00:00.000Z',
      quota: { limit: 1000, used: 0, remaining: 1000, reset_at: '2026-04-10T00:00:00.000Z' },
      rate_limit: { per_second: 1000 },
      overage: { enabled: false, rate_per_verification: 0, current_overage_count: 0 },
      request_id: res.headers['x-request-id'],
    });
  });

  it('uses the plan table, operator overrides and the account own limits', async () => {
    h = await createHarness({
      account: { plan: 'growth', rateLimit: null },
      flags: { plans: JSON.stringify({ growth: { monthly_quota: 777, rate_limit_per_second: 33 } }) },
    });
    const body = (await h.usage(h.liveKey)).json();
    expect(body.plan).toBe('growth');
    expect(body.quota.limit).toBe(777);
    expect(body.rate_limit.per_second).toBe(33);
    expect(body.overage).toMatchObject({ enabled: true, rate_per_verification: 0.006 });
  });

  it('rolls the billing period over by itself, anchored on a January 31 creation day', async () => {
    const clock = new ManualClock('2026-01-31T09:30:00.000Z');
    h = await createHarness({ clock, account: { plan: 'free', quotaLimit: 5 } });
    const nx = 'nobody@nx-domain.test';
    h.dns.setNxdomain('nx-domain.test');

    let body = (await h.usage(h.liveKey)).json();
    expect([body.period_start, body.period_end]).toEqual([
      '2026-01-31T00:00:00.000Z',
      '2026-02-28T00:00:00.000Z',
    ]);
    expect((await h.verify(h.liveKey, { email: nx })).statusCode).toBe(200);
    expect((await h.usage(h.liveKey)).json().quota.used).toBe(1);

    clock.set('2026-02-27T23:59:59.999Z');
    expect((await h.usage(h.liveKey)).json().quota.used).toBe(1);

    clock.set('2026-02-28T00:00:00.000Z');
    body = (await h.usage(h.liveKey)).json();
    expect([body.period_start, body.period_end]).toEqual([
      '2026-02-28T00:00:00.000Z',
      '2026-03-31T00:00:00.000Z',
    ]);
    expect(body.quota).toEqual({ limit: 5, used: 0, remaining: 5, reset_at: '2026-03-31T00:00:00.000Z' });
    await h.verify(h.liveKey, { email: nx });
    await h.verify(h.liveKey, { email: nx });

    clock.advance(35 * DAY); // 2026-04-04: the period that started on March 31
    body = (await h.usage(h.liveKey)).json();
    expect([body.period_start, body.period_end]).toEqual([
      '2026-03-31T00:00:00.000Z',
      '2026-04-30T00:00:00.000Z',
    ]);
    expect(body.quota.used).toBe(0);

    const history = await getUsageHistory(h.runtime.ctx.db, h.accountId);
    expect(history.map((p) => [p.period_start, p.used])).toEqual([
      ['2026-02-28T00:00:00.000Z', 2],
      ['2026-01-31T00:00:00.000Z', 1],
    ]);
  });
});
