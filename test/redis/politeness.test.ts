/**
 * Politeness shared through Redis: four batch engines, each with its own Redis connection and
 * coordination (as four worker processes), against one MX host that counts its concurrent
 * sessions. The specification is test/engine/politeness-kit.ts's, which test/engine also runs on
 * the in-process coordination; here also what happens to the slot of a worker that loses Redis,
 * and to an engine whose Redis is unreachable (that part needs no Redis).
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, openRedis } from '../../src/redis/connection.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import {
  describeSharedPoliteness,
  MX_HOST,
  politenessWorld,
  spreadList,
  statuses,
  type PolitenessWorld,
} from '../engine/politeness-kit.js';
import { skipWithoutRedis, sleep, testRedis, unreachableRedisUrl, type TestRedis } from './redis-kit.js';

describe.skipIf(skipWithoutRedis('Shared politeness on Redis'))('shared politeness on Redis', () => {
  describeSharedPoliteness('Redis, a connection per engine', () => {
    const redis = testRedis();
    return {
      next: async () => createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
      close: () => redis.close(),
    };
  });

  describe('a worker that loses Redis mid-session', () => {
    let world: PolitenessWorld | undefined;
    let redis: TestRedis | undefined;
    afterEach(async () => {
      await world?.close();
      await redis?.close();
      world = undefined;
      redis = undefined;
    });

    it('stops renewing, and its slot frees itself when the lease runs out', async () => {
      redis = testRedis();
      // 20 ms per reply: a session of 500 RCPTs (8 per round trip) lasts over a second.
      world = await politenessWorld({ latencyMs: 20 });
      const leaseMs = 600;
      const tuning = {
        perHostConcurrency: 1,
        sessionLeaseMs: leaseMs,
        itemsPerSession: 50,
        recipientsPerSession: 500,
      };
      const lostClient = await redis.connect();
      let heldSince = 0;
      const dying = world.engine(createRedisCoordination(lostClient, { keyPrefix: redis.prefix }), tuning, {
        onSessionOpen: () => void (heldSince ||= Date.now()),
      });
      const opened: number[] = [];
      const survivor = world.engine(
        createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
        tuning,
        { onSessionOpen: () => void opened.push(Date.now()) },
      );

      const stop = new AbortController();
      const dyingRun = dying.verifyMany(spreadList(2000, 1)[0]!, { signal: stop.signal });
      dyingRun.catch(() => undefined); // aborted below
      for (const until = Date.now() + 30_000; heldSince === 0 && Date.now() < until;)
        await new Promise((r) => setTimeout(r, 5));
      expect(heldSince).toBeGreaterThan(0);
      // Its Redis connection drops (no QUIT, no reconnection): the lease is neither renewed nor released.
      lostClient.disconnect();
      const lostAt = Date.now();

      const results = await survivor.verifyMany(['user-a@d0.test', 'user-b@d1.test']);
      expect(statuses(results)).toEqual({ 'deliverable/-': 2 });
      // The slot stayed taken until the lease ran out (last renewed at most a third of it before).
      expect(opened[0]! - lostAt).toBeGreaterThanOrEqual(leaseMs / 2);
      // And the host never saw both at once: the engine that lost Redis ended its session in time.
      expect(world.mta.stats().peakConcurrentByHost[MX_HOST]).toBe(1);
      stop.abort(new Error('test over'));
      await expect(dyingRun).rejects.toThrow('test over');
    });
  });
});

describe('an engine whose Redis is unreachable', () => {
  it('opens no session (politeness never fails open), says so once, and can still be stopped', async () => {
    const client = await openRedis(await unreachableRedisUrl(), { logger: pino({ level: 'silent' }) });
    const world = await politenessWorld();
    try {
      const warnings: object[] = [];
      const engine = world.engine(
        createRedisCoordination(client, { keyPrefix: 'mvtest:unreachable:' }),
        {},
        undefined,
        { warn: (obj) => void warnings.push(obj) },
      );
      const stop = new AbortController();
      const run = engine.verifyMany(['user1@d0.test', 'user2@d1.test'], { signal: stop.signal });
      run.catch(() => undefined); // aborted below
      await sleep(500);
      expect(world.mta.stats().connections).toBe(0);
      // Every call fails (a slot asked for every 50-200 ms, caches): one line per interval.
      expect(warnings).toHaveLength(1);
      stop.abort(new Error('stopped'));
      await expect(run).rejects.toThrow('stopped');
    } finally {
      await world.close();
      await closeRedis(client);
    }
  });
});
