import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.js';

describe('per-account rate limit', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ account: { rateLimit: 3 } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers 429 rate_limit_exceeded with Retry-After and the RateLimit headers past the per-second limit', async () => {
    // Four requests at once: all land in the same one-second window.
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => h.verify(h.testKey, { email: 'a@valid.example.com' })),
    );
    const ok = responses.filter((r) => r.statusCode === 200);
    const limited = responses.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(3);
    expect(limited).toHaveLength(1);
    const res = limited[0]!;
    expect(res.json()).toMatchObject({
      error: 'rate_limit_exceeded',
      request_id: res.headers['x-request-id'],
    });
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=1');
    expect(res.headers.ratelimit).toBe('"default";r=0;t=1');
    const remaining = ok.map((r) => /r=(\d+)/.exec(String(r.headers.ratelimit))![1]).sort();
    expect(remaining).toEqual(['0', '1', '2']);
    for (const r of ok) expect(r.headers['ratelimit-policy']).toBe('"default";q=3;w=1');
  });

  it('shares one limit across the keys of an account and across routes', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const statuses = [];
    for (const req of [
      () => h.usage(h.liveKey),
      () => h.usage(h.testKey),
      () => h.verify(h.testKey, { email: 'a@b.co' }),
      () => h.usage(h.liveKey),
    ])
      statuses.push((await req()).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
