/**
 * Two API servers, each with its own runtime and Redis connection (as two `serve` processes on
 * one store), wired by startServer from --redis-url: one account's limit holds across both, and
 * /readyz checks Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/api/metrics.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startServer, type RunningServer, type Runtime } from '../../src/runtime.js';
import pino from 'pino';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { TRUST_ANCHOR_FLAGS } from '../kit/dns-server.js';
import { skipWithoutRedis, TEST_REDIS_URL, testRedis, type TestRedis } from './redis-kit.js';

const RATE = 5;

describe.skipIf(skipWithoutRedis('API processes sharing Redis'))('API processes sharing Redis', () => {
  let h: Harness;
  let redis: TestRedis;
  let second: Runtime;
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    redis = testRedis();
    await redis.connect(); // for the clean-up of the prefix
    const flags = { port: '0', redisUrl: TEST_REDIS_URL, redisKeyPrefix: redis.prefix };
    h = await createHarness({ account: { rateLimit: RATE }, flags });
    const { databaseUrl } = h.runtime.ctx.config;
    const store =
      databaseUrl === null
        ? { dataDir: h.dir }
        : { dataDir: h.dir, databaseUrl, secretKey: h.runtime.ctx.config.secrets.key };
    // The harness's resolver, which the trust probes find truthful (/readyz is ready only then).
    const dns = { dnsServer: h.dns.address, ...TRUST_ANCHOR_FLAGS };
    second = await createRuntime(loadConfig({ ...flags, ...store, ...dns }, {}), {
      logger: pino({ level: 'silent' }),
    });
    for (const runtime of [h.runtime, second])
      servers.push(await startServer(runtime, { metrics: createMetrics() }));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await second.close();
    await h.close();
    await redis.close();
  });

  const usage = (server: RunningServer) =>
    fetch(`${server.url}/v1/account/usage`, { headers: { authorization: `Bearer ${h.liveKey}` } });

  it('each runtime holds a connected Redis client', () => {
    expect(h.runtime.redis?.status).toBe('ready');
    expect(second.redis?.status).toBe('ready');
  });

  it('admits exactly the rate of a burst spread over both servers, with the RateLimit headers', async () => {
    const responses = await Promise.all(Array.from({ length: 3 * RATE }, (_, i) => usage(servers[i % 2]!)));
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(RATE);
    expect(limited).toHaveLength(2 * RATE);
    expect(ok.map((r) => r.headers.get('ratelimit')).sort()).toEqual(
      [0, 1, 2, 3, 4].map((r) => `"default";r=${r};t=1`),
    );
    for (const r of limited) {
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('ratelimit')).toBe('"default";r=0;t=1');
      expect(r.headers.get('ratelimit-policy')).toBe(`"default";q=${RATE};w=1`);
    }
    await Promise.all(responses.map((r) => r.arrayBuffer()));
  });

  it('GET /readyz answers 200 while the store and Redis answer', async () => {
    for (const server of servers) {
      const res = await fetch(`${server.url}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok' });
    }
  });
});
