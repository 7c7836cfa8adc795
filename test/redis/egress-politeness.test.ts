/**
 * Egress pools in the scale-out mode: two batch engines, each with its own Redis connection and
 * coordination (as two worker processes), both sending from the source addresses 127.0.0.2 and
 * 127.0.0.3, against the Postfix-like MTA, which records the client address of each session. The
 * per-(egress, host) caps and rests are the shared ones.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { VerificationResult } from '../../src/engine/types.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../kit/postfix-like-mta.js';
import { skipWithoutRedis, testRedis, type TestRedis } from './redis-kit.js';

const MX = '127.0.6.21';
const CLIENTS = ['127.0.0.2', '127.0.0.3'];
const CAP = 2;

interface World {
  mta: PostfixLikeMta;
  redis: TestRedis;
  engine(): Promise<BatchEngine>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(refuse: (client: string) => string | null = () => null): Promise<World> {
  const mta = await startPostfixLikeMta({
    hosts: [MX],
    latencyMs: 5,
    inFlowDelayMs: 0,
    rcpt: (_address, { client }) => refuse(client) ?? '250 2.1.5 Ok',
  });
  const dns = await startDnsServer();
  const redis = testRedis();
  cleanups.push(
    () => mta.close(),
    () => dns.close(),
    () => redis.close(),
  );
  dns.setDomain('mx.test', { a: [MX] });
  dns.setDomain('pool.test', { mx: [{ exchange: 'mx.test', priority: 10 }] });
  const config = loadConfig(
    {
      dnsServer: dns.address,
      smtpPort: String(mta.port),
      allowInternalTargets: 'true',
      sourceAddress: CLIENTS,
    },
    {},
  );
  return {
    mta,
    redis,
    engine: async () => {
      const coordination = createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix });
      const engine = createBatchEngine(
        {
          ...config.engine,
          concurrency: 50,
          perHostConcurrency: CAP,
          greylistRetries: 0,
          greylistDelayMs: 20,
          timeoutMs: 2000,
          hostBackoffMs: 10,
          itemsPerSession: 5,
          recipientsPerSession: 20,
        },
        { coordination },
      );
      cleanups.push(
        () => coordination.close(),
        () => engine.close(),
      );
      return engine;
    },
  };
}

function addresses(count: number, offset = 0): string[] {
  return Array.from({ length: count }, (_, i) => `user${offset + i}@pool.test`);
}

function statuses(results: VerificationResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results)
    out[`${r.status}/${r.reason ?? '-'}`] = (out[`${r.status}/${r.reason ?? '-'}`] ?? 0) + 1;
  return out;
}

describe.skipIf(skipWithoutRedis('Egress pools on Redis'))('egress pools on Redis', () => {
  it('two engines keep each (egress, host) pair within one shared cap', async () => {
    const w = await world();
    const [a, b] = [await w.engine(), await w.engine()];
    const results = await Promise.all([a.verifyMany(addresses(150)), b.verifyMany(addresses(150, 150))]);
    // The catch-all probe accepts too: every address is risky/catch_all, each answered once.
    expect(statuses(results.flat())).toEqual({ 'risky/catch_all': 300 });
    const stats = w.mta.stats();
    for (const client of CLIENTS) {
      expect(stats.sessionsByClient[client]).toBeGreaterThan(1);
      expect(stats.peakConcurrentByClient[MX]![client]).toBeLessThanOrEqual(CAP);
    }
  });

  it('an egress that a host refused by policy for one engine rests there for the other too', async () => {
    const refused = '127.0.0.3';
    const w = await world((client) =>
      client === refused
        ? `554 5.7.1 Service unavailable; Client host [${client}] blocked using zen.spamhaus.org`
        : null,
    );
    const first = await w.engine();
    expect(statuses(await first.verifyMany(addresses(60)))).toEqual({ 'risky/catch_all': 60 });
    const before = w.mta.stats().sessionsByClient[refused] ?? 0;
    expect(before).toBeGreaterThan(0);
    // The rest is in Redis, under the (egress, host) key.
    const client = await w.redis.connect();
    expect(await client.exists(`${w.redis.prefix}health:${refused}|${MX}`)).toBe(1);

    const second = await w.engine();
    expect(statuses(await second.verifyMany(addresses(60, 60)))).toEqual({ 'risky/catch_all': 60 });
    expect(w.mta.stats().sessionsByClient[refused] ?? 0).toBe(before);
  });
});
