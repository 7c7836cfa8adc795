import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../kit/api-harness.js';

const NX = 'nobody@nx-domain.test';

describe('quota on live keys', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function setup(plan: string, quotaLimit: number): Promise<Harness> {
    h = await createHarness({ account: { plan, quotaLimit } });
    h.dns.setNxdomain('nx-domain.test');
    return h;
  }

  it('a live verification runs the real engine and counts one', async () => {
    const h = await setup('free', 10);
    const res = await h.verify(h.liveKey, { email: NX });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      valid: false,
      status: 'undeliverable',
      reason: 'domain_not_found',
      mx: false,
    });
    expect(h.dns.queryCount('nx-domain.test')).toBeGreaterThan(0);
    expect((await h.usage(h.liveKey)).json().quota).toMatchObject({ limit: 10, used: 1, remaining: 9 });
  });

  it('a malformed address is refused before the quota and not counted', async () => {
    const h = await setup('free', 10);
    expect((await h.verify(h.liveKey, { email: 'nope' })).statusCode).toBe(422);
    expect((await h.usage(h.liveKey)).json().quota.used).toBe(0);
  });

  it('without overage, the request past the quota is 429 quota_exceeded and nothing is counted', async () => {
    const h = await setup('free', 2);
    expect((await h.verify(h.liveKey, { email: NX })).statusCode).toBe(200);
    expect((await h.verify(h.liveKey, { email: NX })).statusCode).toBe(200);
    const refused = await h.verify(h.liveKey, { email: NX });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({
      error: 'quota_exceeded',
      request_id: refused.headers['x-request-id'],
    });
    expect(refused.headers['ratelimit-policy']).toMatch(/^"default";q=\d+;w=1$/);
    expect(refused.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    const usage = (await h.usage(h.liveKey)).json();
    expect(usage.quota).toMatchObject({ limit: 2, used: 2, remaining: 0 });
    expect(usage.overage.current_overage_count).toBe(0);
    // Test keys are not counted, so they keep working on a used-up account.
    expect((await h.verify(h.testKey, { email: 'a@valid.example.com' })).statusCode).toBe(200);
    const metrics = (await h.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^mailverdict_quota_refusals_total 1$/m);
  });

  it('with overage, requests go on past the quota and current_overage_count grows', async () => {
    const h = await setup('starter', 2);
    for (let i = 0; i < 5; i++) expect((await h.verify(h.liveKey, { email: NX })).statusCode).toBe(200);
    const usage = (await h.usage(h.liveKey)).json();
    expect(usage.quota).toMatchObject({ limit: 2, used: 5, remaining: 0 });
    expect(usage.overage).toEqual({ enabled: true, rate_per_verification: 0.008, current_overage_count: 3 });
  });

  it('counts exactly the quota under 200 concurrent requests, never more', async () => {
    const h = await setup('free', 50);
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => h.verify(h.liveKey, { email: NX })),
    );
    const codes = responses.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(50);
    expect(codes.filter((c) => c === 429)).toHaveLength(150);
    for (const r of responses.filter((x) => x.statusCode === 429))
      expect(r.json().error).toBe('quota_exceeded');
    expect((await h.usage(h.liveKey)).json().quota).toMatchObject({ used: 50, remaining: 0 });
  });

  it('counts every one of many concurrent requests once with overage', async () => {
    const h = await setup('pro', 30);
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => h.verify(h.liveKey, { email: NX })),
    );
    expect(responses.every((r) => r.statusCode === 200)).toBe(true);
    const usage = (await h.usage(h.liveKey)).json();
    expect(usage.quota.used).toBe(100);
    expect(usage.overage.current_overage_count).toBe(70);
  });

  const batch = (h: Harness, key: string, emails: string[]) =>
    h.inject({
      method: 'POST',
      url: '/v1/verify/batch',
      headers: { authorization: `Bearer ${key}` },
      payload: { emails },
    });
  const addresses = (n: number) => Array.from({ length: n }, (_, i) => `p${i}@nx-domain.test`);

  it("a batch shows in the same process's next usage read, however long the usage cache keeps reads (issue 25)", async () => {
    h = await createHarness({ account: { plan: 'free', quotaLimit: 10 }, flags: { usageCacheTtl: '1h' } });
    // A first read fills this process's usage cache.
    expect((await h.usage(h.liveKey)).json().quota).toMatchObject({ used: 0, remaining: 10 });
    expect((await batch(h, h.liveKey, addresses(3))).statusCode).toBe(202);
    expect((await h.usage(h.liveKey)).json().quota).toMatchObject({ limit: 10, used: 3, remaining: 7 });
  });

  it('the over-quota message says how the operator raises the quota', async () => {
    const h = await setup('free', 2);
    const refused = await batch(h, h.liveKey, addresses(3));
    expect(refused.statusCode).toBe(429);
    expect(refused.json().message).toContain('mailverdict accounts set-plan');
    expect(refused.json().message).toContain('/operator');
  });

  it('plan unlimited has no quota: a batch larger than any plan is taken, counted, never overage', async () => {
    h = await createHarness({ account: { plan: 'unlimited' } });
    expect((await batch(h, h.liveKey, addresses(1_200))).statusCode).toBe(202);
    const usage = (await h.usage(h.liveKey)).json();
    expect(usage).toMatchObject({ plan: 'unlimited', quota: { limit: null, used: 1_200, remaining: null } });
    expect(usage.overage.current_overage_count).toBe(0);
  });
});
