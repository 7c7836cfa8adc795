/**
 * A session that Happy Eyeballs connected to another address of its host than the one its shared
 * (Redis) slot was taken for moves the slot to the address that won (src/engine/batch/
 * shared-politeness.ts, `moveTo`), so that other processes count it where the server does: a
 * batch session queued under the host's IPv4 address that connects over IPv6, and a single
 * verification whose IPv6 connect hangs and whose IPv4 one wins.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import type { Blackhole } from '../kit/blackhole.js';
import { startBlackhole } from '../kit/blackhole.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../kit/postfix-like-mta.js';
import { waitFor } from '../kit/wait-for.js';
import { skipWithoutRedis, testRedis, type TestRedis } from './redis-kit.js';

const CAP = 1;
const TIMEOUT_MS = 5_000;

describe.skipIf(skipWithoutRedis('Happy Eyeballs and shared slots'))(
  'a shared slot follows the address that Happy Eyeballs connected to (Redis)',
  () => {
    let dns: FakeDnsServer;
    /** On ::1 only, its port hanging on 127.0.0.1; and the other way round. */
    let mta6: PostfixLikeMta;
    let mta4: PostfixLikeMta;
    const holes: Blackhole[] = [];
    let redis: TestRedis;
    /** Reads the slots. */
    let client: Redis;
    const closing: (Verifier | BatchEngine)[] = [];

    beforeAll(async () => {
      const rcpt = (address: string): string =>
        address.startsWith('user') ? '250 2.1.5 Ok' : '550 5.1.1 User unknown';
      // Each transaction pays 100 ms: the batch holds its session for a while.
      [mta6, mta4] = await Promise.all([
        startPostfixLikeMta({ hosts: ['::1'], inFlowDelayMs: 100, rcpt }),
        startPostfixLikeMta({ hosts: ['127.0.0.1'], inFlowDelayMs: 0, rcpt }),
      ]);
      holes.push(await startBlackhole(['127.0.0.1'], mta6.port), await startBlackhole(['::1'], mta4.port));
      dns = await startDnsServer({
        'dual.test': { mx: [{ exchange: 'mx.dual.test', priority: 10 }] },
        'mx.dual.test': { a: ['127.0.0.1'], aaaa: ['::1'] },
      });
    });

    afterEach(async () => {
      await Promise.all(closing.splice(0).map((c) => c.close()));
      await redis?.close();
    });

    afterAll(async () => {
      for (const hole of holes) hole.close();
      await Promise.all([mta6.close(), mta4.close(), dns.close()]);
    });

    async function slotsAt(address: string): Promise<number> {
      return client.zcard(`${redis.prefix}slots:${address}`);
    }

    async function verifierOn(port: number): Promise<Verifier> {
      const options = kitEngineOptions(dns.address, port);
      const verifier = createVerifier(
        { ...options, smtp: { ...options.smtp, perHostConcurrency: CAP, sessions: { idleMs: 5_000 } } },
        {
          sharedSlots: {
            coordination: createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
            perHostConcurrency: CAP,
          },
        },
      );
      closing.push(verifier);
      return verifier;
    }

    it("moves a batch session's slot to the IPv6 address it connected to, where another process's single verification waits for it", async () => {
      redis = testRedis();
      client = await redis.connect();
      const options = kitEngineOptions(dns.address, mta6.port);
      const batch = createBatchEngine(
        {
          ...options,
          concurrency: 10,
          perHostConcurrency: CAP,
          greylistRetries: 0,
          greylistDelayMs: 10,
          timeoutMs: TIMEOUT_MS,
          recipientsPerTransaction: 2,
        },
        { coordination: createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }) },
      );
      closing.push(batch);
      const verifier = await verifierOn(mta6.port);
      mta6.resetStats();
      // The host's queue is its IPv4 address's (listed first); the session races IPv6 first and wins there.
      const run = batch.verifyMany(Array.from({ length: 10 }, (_, i) => `user${i}@dual.test`));
      await waitFor(
        'the batch slot at ::1',
        async () => ((await slotsAt('::1')) === 1 && (await slotsAt('127.0.0.1')) === 0 ? true : undefined),
        3_000,
        20,
      );
      // A single verification of another process goes to ::1 first: it waits for the batch's slot.
      const single = await verifier.verify('user-single@dual.test', { timeoutMs: TIMEOUT_MS });
      expect(single.status).toBe('deliverable');
      expect(new Set((await run).map((r) => r.status))).toEqual(new Set(['deliverable']));
      expect(mta6.stats().peakConcurrentByHost['::1']).toBe(CAP);
    });

    it("moves a single verification's slot to the IPv4 address that won when IPv6 hangs", async () => {
      redis = testRedis();
      client = await redis.connect();
      const verifier = await verifierOn(mta4.port);
      const result = await verifier.verify('user@dual.test', { timeoutMs: TIMEOUT_MS });
      expect(result.status).toBe('deliverable');
      // The session stays warm, and so does its slot, at the address it is connected to.
      expect(await slotsAt('127.0.0.1')).toBe(1);
      expect(await slotsAt('::1')).toBe(0);
    });
  },
);
