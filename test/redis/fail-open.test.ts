/**
 * Redis unreachable: the shared rate limiter admits (fail open), counts each such request in
 * `mailverdict_rate_limit_fail_open_total` and warns at most once per interval; /readyz says
 * which dependency is missing. Needs no Redis: the URL is a closed loopback port.
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { buildApp } from '../../src/api/app.js';
import { createMetrics } from '../../src/api/metrics.js';
import { closeRedis, openRedis } from '../../src/redis/connection.js';
import { createRedisRateLimiter } from '../../src/redis/rate-limiter.js';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { unreachableRedisUrl } from './redis-kit.js';

describe('rate limits when Redis is unreachable', () => {
  let client: Redis;
  beforeAll(async () => {
    client = await openRedis(await unreachableRedisUrl(), { logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await closeRedis(client);
  });

  it('opening the connection does not stop start-up', () => {
    expect(client.status).not.toBe('ready');
  });

  it('admits every request and counts each in the metric', async () => {
    const registry = new Registry();
    const limiter = createRedisRateLimiter(client, {
      keyPrefix: 'mvtest:',
      registry,
      logger: pino({ level: 'silent' }),
    });
    const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.consume('acct', 5)));
    for (const d of decisions) expect(d).toEqual({ allowed: true, limit: 5, remaining: 5, resetSeconds: 1 });
    expect(await registry.getSingleMetricAsString('mailverdict_rate_limit_fail_open_total')).toMatch(
      /^mailverdict_rate_limit_fail_open_total 25$/m,
    );
  });

  it('warns at most once per interval, with the number admitted unchecked since the last warning', async () => {
    const lines: string[] = [];
    // The interval on a clock moved by hand: a loaded machine cannot spread the burst over it.
    let now = 0;
    const limiter = createRedisRateLimiter(client, {
      keyPrefix: 'mvtest:',
      registry: new Registry(),
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
      warnIntervalMs: 200,
      now: () => now,
    });
    await Promise.all(Array.from({ length: 25 }, () => limiter.consume('acct', 5)));
    expect(lines).toHaveLength(1);
    now += 199;
    await limiter.consume('acct', 5);
    expect(lines).toHaveLength(1);
    now += 1;
    await limiter.consume('acct', 5);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      { level: 40, admitted_unchecked: 1, msg: expect.stringContaining('fail open') },
      { level: 40, admitted_unchecked: 26 },
    ]);
  });

  describe('through the API', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ account: { rateLimit: 2 } });
    });
    afterAll(async () => {
      await h.close();
    });

    it('answers requests past the rate with the headers, /metrics counts them and /readyz names redis', async () => {
      const metrics = createMetrics();
      const app = buildApp({
        ...h.runtime.ctx,
        metrics,
        rateLimiter: createRedisRateLimiter(client, {
          keyPrefix: 'mvtest:',
          registry: metrics.registry,
          logger: h.runtime.ctx.logger,
        }),
        readinessChecks: { redis: () => client.ping() },
      });
      try {
        for (let i = 0; i < 4; i++) {
          const res = await app.inject({
            method: 'GET',
            url: '/v1/account/usage',
            headers: { authorization: `Bearer ${h.liveKey}` },
          });
          expect(res.statusCode).toBe(200);
          expect(res.headers.ratelimit).toBe('"default";r=2;t=1');
          expect(res.headers['ratelimit-policy']).toBe('"default";q=2;w=1');
        }
        const scrape = await app.inject({ method: 'GET', url: '/metrics' });
        expect(scrape.body).toMatch(/^mailverdict_rate_limit_fail_open_total 4$/m);
        const ready = await app.inject({ method: 'GET', url: '/readyz' });
        expect(ready.statusCode).toBe(503);
        expect(ready.json()).toMatchObject({ status: 'unavailable', failed: ['redis'] });
      } finally {
        await app.close();
      }
    });
  });
});
