/**
 * The shared rate limiter against a real Redis, with two limiters on two connections sharing the
 * keys, as two API processes do. Times checked are the Redis server's (the script returns them).
 */
import fc from 'fast-check';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../src/services/usage/rate-limit.js';
import { createRedisRateLimiter, createRedisWindow, type RedisWindow } from '../../src/redis/rate-limiter.js';
import { skipWithoutRedis, sleep, testRedis, type TestRedis } from './redis-kit.js';
import { slidingWindowViolations } from './window-check.js';

const RATE = 10;
const EMISSION_MS = 1000 / RATE;

describe.skipIf(skipWithoutRedis('Redis rate limiter'))('Redis rate limiter, two processes', () => {
  let redis: TestRedis;
  let limiters: [RateLimiter, RateLimiter];
  let windows: [RedisWindow, RedisWindow];
  beforeEach(async () => {
    redis = testRedis();
    const clients = [await redis.connect(), await redis.connect()];
    const logger = pino({ level: 'silent' });
    limiters = [
      createRedisRateLimiter(clients[0]!, { keyPrefix: redis.prefix, registry: new Registry(), logger }),
      createRedisRateLimiter(clients[1]!, { keyPrefix: redis.prefix, registry: new Registry(), logger }),
    ];
    windows = [createRedisWindow(clients[0]!, redis.prefix), createRedisWindow(clients[1]!, redis.prefix)];
  });
  afterEach(async () => {
    await redis.close();
  });

  it('admits exactly the rate of a burst of three times the rate sent at once through both', async () => {
    const decisions = await Promise.all(
      Array.from({ length: 3 * RATE }, (_, i) => limiters[i % 2]!.consume('acct', RATE)),
    );
    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted).toHaveLength(RATE);
    // Each admission saw the one before it: remaining counts down without a repeat.
    expect(admitted.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const d of decisions.filter((x) => !x.allowed))
      expect(d).toEqual({ allowed: false, limit: RATE, remaining: 0, resetSeconds: 1 });
  });

  it('refuses until the burst has left the window, then admits requests paced at the emission interval', async () => {
    const burst = await Promise.all(
      Array.from({ length: 2 * RATE }, (_, i) => windows[i % 2]!('acct', RATE)),
    );
    const refusal = burst.find((a) => !a.admitted)!;
    // Until the burst's first admission leaves the window, by the server's own times (however long
    // the burst took to arrive on a busy machine).
    const firstAdmittedAt = Math.min(...burst.filter((a) => a.admitted).map((a) => a.atMicros));
    expect(refusal.waitMs).toBe((firstAdmittedAt + 1_000_000 - refusal.atMicros) / 1000);
    expect(refusal.waitMs).toBeGreaterThan(0);
    expect(refusal.waitMs).toBeLessThanOrEqual(1000);
    expect((await windows[0]('acct', RATE)).admitted).toBe(false);
    await sleep(refusal.waitMs + 5);
    // One second of requests at the emission interval, alternating processes: every one fits.
    const paced = [];
    for (let k = 0; k < RATE; k++) {
      paced.push(await windows[k % 2]!('acct', RATE));
      await sleep(EMISSION_MS);
    }
    expect(paced.map((a) => a.admitted)).toEqual(Array<boolean>(RATE).fill(true));
    // The paced second is full again until its first request is a second old.
    const tooSoon = await windows[0]('acct', RATE);
    const sinceFirst = tooSoon.atMicros - paced[0]!.atMicros;
    expect(tooSoon.admitted).toBe(sinceFirst >= 1_000_000);
  });

  it('over random arrivals from both, no sliding second admits more than the rate, and a refusal always had the rate in the second before it', async () => {
    // Real time cannot be shrunk, so the scenarios run side by side (a key each) instead of one
    // after another under fc.assert.
    const scenarios = fc.sample(
      fc.tuple(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1500 })), {
          minLength: 5,
          maxLength: 80,
        }),
      ),
      12,
    );
    await Promise.all(
      scenarios.map(async ([rate, offsets], run) => {
        const answers = await Promise.all(
          offsets.map(async (offset, i) => {
            await sleep(offset);
            return windows[i % 2]!(`acct-${run}`, rate);
          }),
        );
        answers.sort((a, b) => a.atMicros - b.atMicros);
        const admitted = answers.filter((a) => a.admitted).map((a) => a.atMicros);
        const refused = answers.filter((a) => !a.admitted).map((a) => a.atMicros);
        expect(slidingWindowViolations(admitted, refused, rate, 1_000_000), `rate ${rate}`).toEqual([]);
      }),
    );
  });

  it('keeps prefixes apart, so that deployments sharing a Redis never meet', async () => {
    const other = testRedis();
    try {
      const stranger = createRedisWindow(await other.connect(), other.prefix);
      for (let i = 0; i < RATE; i++) await windows[0]('acct', RATE);
      expect((await windows[1]('acct', RATE)).admitted).toBe(false);
      expect((await stranger('acct', RATE)).admitted).toBe(true);
    } finally {
      await other.close();
    }
  });
});
