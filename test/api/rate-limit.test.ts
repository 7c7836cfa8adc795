import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createMemoryRateLimiter, type RateLimitDecision } from '../../src/services/usage/rate-limit.js';
import { ManualClock } from '../../src/clock.js';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { slidingWindowViolations } from '../redis/window-check.js';

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

  it('never admits a second burst at a window boundary: the window slides', async () => {
    const clock = new ManualClock();
    const app = buildApp({ ...h.runtime.ctx, rateLimiter: createMemoryRateLimiter({ clock }) });
    try {
      const usage = () =>
        app.inject({
          method: 'GET',
          url: '/v1/account/usage',
          headers: { authorization: `Bearer ${h.liveKey}` },
        });
      clock.advance(900); // late in a fixed window's second: a fixed window would refill in 100 ms
      for (let i = 0; i < 3; i++) expect((await usage()).statusCode).toBe(200);
      clock.advance(999);
      const refused = await usage();
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers.ratelimit).toBe('"default";r=0;t=1');
      clock.advance(1);
      const admitted = await usage();
      expect(admitted.statusCode).toBe(200);
      expect(admitted.headers.ratelimit).toBe('"default";r=2;t=1');
    } finally {
      await app.close();
    }
  });
});

describe('in-process sliding-window limiter', () => {
  const RATE = 10;
  const EMISSION_MS = 1000 / RATE;

  async function offer(limiter: ReturnType<typeof createMemoryRateLimiter>, n: number, key = 'acct') {
    return Promise.all(Array.from({ length: n }, () => limiter.consume(key, RATE)));
  }

  it('admits exactly the rate of a burst of three times the rate at one instant', async () => {
    const limiter = createMemoryRateLimiter({ clock: new ManualClock() });
    const decisions = await offer(limiter, 3 * RATE);
    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted).toHaveLength(RATE);
    expect(admitted.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const d of decisions.filter((x) => !x.allowed))
      expect(d).toEqual<RateLimitDecision>({ allowed: false, limit: RATE, remaining: 0, resetSeconds: 1 });
  });

  it('refuses until the burst has left the window, then admits requests paced at the emission interval', async () => {
    const clock = new ManualClock();
    const limiter = createMemoryRateLimiter({ clock });
    const burstAt = clock.now().getTime();
    await offer(limiter, 3 * RATE);
    // Inside the burst's second nothing more fits, however slowly it comes (a token bucket or
    // GCRA with a burst of RATE would admit one at each of these).
    for (let t = EMISSION_MS; t < 1000; t += EMISSION_MS) {
      clock.set(burstAt + t);
      expect((await limiter.consume('acct', RATE)).allowed).toBe(false);
    }
    const start = burstAt + 1000;
    for (let k = 0; k < 3 * RATE; k++) {
      clock.set(start + k * EMISSION_MS);
      expect((await limiter.consume('acct', RATE)).allowed).toBe(true);
    }
    // One millisecond ahead of the next emission slot is one request too many.
    clock.set(start + 3 * RATE * EMISSION_MS - 1);
    expect((await limiter.consume('acct', RATE)).allowed).toBe(false);
    clock.advance(1);
    expect((await limiter.consume('acct', RATE)).allowed).toBe(true);
  });

  it('keeps each key to its own window', async () => {
    const limiter = createMemoryRateLimiter({ clock: new ManualClock() });
    await offer(limiter, RATE, 'a');
    expect((await limiter.consume('a', RATE)).allowed).toBe(false);
    expect((await limiter.consume('b', RATE)).allowed).toBe(true);
  });

  it('applies a lowered limit at once', async () => {
    const clock = new ManualClock();
    const limiter = createMemoryRateLimiter({ clock });
    await offer(limiter, RATE);
    clock.advance(500);
    expect((await limiter.consume('acct', 3)).allowed).toBe(false);
    clock.advance(500);
    expect(await limiter.consume('acct', 3)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('over random arrivals, no sliding second admits more than the rate, and a refusal always had the rate in the second before it', async () => {
    const arrivals = fc.array(
      // Gaps of 0 make bursts at one instant, the fixed ones land arrivals on and beside window
      // edges, the rest spreads them over a few seconds.
      fc.oneof(fc.constant(0), fc.constantFrom(1, 100, 999, 1000, 1001), fc.integer({ min: 1, max: 250 })),
      { minLength: 1, maxLength: 300 },
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), arrivals, async (rate, gaps) => {
        const clock = new ManualClock(0);
        const limiter = createMemoryRateLimiter({ clock });
        const admitted: number[] = [];
        const refused: number[] = [];
        for (const gap of gaps) {
          clock.advance(gap);
          const at = clock.now().getTime();
          const d = await limiter.consume('acct', rate);
          if (d.allowed) {
            admitted.push(at);
            // remaining is what the rest of this sliding second still admits.
            expect(d.remaining).toBe(rate - admitted.filter((a) => a > at - 1000).length);
          } else refused.push(at);
        }
        expect(slidingWindowViolations(admitted, refused, rate, 1000)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
