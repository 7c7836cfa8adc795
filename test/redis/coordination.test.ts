/**
 * The engine's coordination in Redis, against a real Redis: two instances on two connections
 * (as two worker processes) share session slots, host health and caches.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EngineCoordination, SlotLease } from '../../src/engine/coordination.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import { skipWithoutRedis, sleep, testRedis, type TestRedis } from './redis-kit.js';

describe.skipIf(skipWithoutRedis('Redis coordination'))('Redis coordination, two processes', () => {
  let redis: TestRedis;
  let a: EngineCoordination;
  let b: EngineCoordination;
  beforeEach(async () => {
    redis = testRedis();
    a = createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix });
    b = createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await redis.close();
  });

  describe('session slots', () => {
    it('two instances asking at once get exactly cap slots of one key', async () => {
      const leases = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).slots.tryAcquire('mx1', 5, 10_000)),
      );
      expect(leases.filter((l) => l !== null)).toHaveLength(5);
      expect((await a.slots.tryAcquire('mx2', 5, 10_000)) !== null).toBe(true);
    });

    it('two instances taking and giving back slots never hold more than cap together', async () => {
      const cap = 3;
      let held = 0;
      let peak = 0;
      let taken = 0;
      const worker = async (coordination: EngineCoordination) => {
        for (let round = 0; round < 40; round++) {
          const lease = await coordination.slots.tryAcquire('mx', cap, 10_000);
          if (lease === null) {
            await sleep(1);
            continue;
          }
          taken++;
          peak = Math.max(peak, ++held);
          await sleep(Math.random() * 4);
          held--;
          await coordination.slots.release(lease);
        }
      };
      await Promise.all([a, b, a, b, a, b].map(worker));
      expect(peak).toBeLessThanOrEqual(cap);
      expect(peak).toBe(cap);
      expect(taken).toBeGreaterThan(cap);
    });

    it('a lease that is not renewed expires and its slot becomes free', async () => {
      const lease = await a.slots.tryAcquire('mx', 1, 150);
      expect(lease).not.toBeNull();
      expect(await b.slots.tryAcquire('mx', 1, 150)).toBeNull();
      await sleep(200);
      expect(await b.slots.tryAcquire('mx', 1, 10_000)).not.toBeNull();
      expect(await a.slots.renew(lease!, 10_000)).toBe(false);
    });

    it('a renewed lease outlives its first term', async () => {
      const lease = (await a.slots.tryAcquire('mx', 1, 200))!;
      await sleep(120);
      expect(await a.slots.renew(lease, 200)).toBe(true);
      await sleep(120);
      expect(await b.slots.tryAcquire('mx', 1, 200)).toBeNull();
    });

    it('a release with a lost lease does nothing to the slot another holds now', async () => {
      const lost = (await a.slots.tryAcquire('mx', 1, 100))!;
      await sleep(150);
      const current = (await b.slots.tryAcquire('mx', 1, 10_000))!;
      await a.slots.release(lost);
      expect(await a.slots.tryAcquire('mx', 1, 10_000)).toBeNull();
      await b.slots.release(current);
      expect(await a.slots.tryAcquire('mx', 1, 10_000)).not.toBeNull();
    });

    it('leases of different lengths on one key do not expire each other', async () => {
      const long: SlotLease = (await a.slots.tryAcquire('mx', 2, 10_000))!;
      await b.slots.tryAcquire('mx', 2, 100);
      await sleep(150);
      expect(await b.slots.tryAcquire('mx', 2, 100)).not.toBeNull(); // the short one's slot
      expect(await b.slots.tryAcquire('mx', 2, 100)).toBeNull(); // the long one still holds
      expect(await a.slots.renew(long, 10_000)).toBe(true);
    });
  });

  describe('host health', () => {
    const BASE = 10_000;
    const MAX = 45_000;
    it('doubles the back-off with each failure in a row, from either instance, up to the max', async () => {
      const expected = [10_000, 20_000, 40_000, 45_000, 45_000];
      for (let i = 0; i < 5; i++) {
        // Redis runs on this machine's clock and stamps the failure between these two readings, so
        // the back-off ends `expected` after a moment between them (ms rounded up: the + 1), with
        // no margin that a slow machine could overrun.
        const before = Date.now();
        const state = await (i % 2 ? b : a).health.recordFailure('mx', BASE, MAX);
        const after = Date.now();
        expect(state.failuresInARow).toBe(i + 1);
        expect(state.notBefore).toBeGreaterThanOrEqual(before + expected[i]!);
        expect(state.notBefore).toBeLessThanOrEqual(after + expected[i]! + 1);
      }
      expect(await b.health.get('mx')).toEqual(await a.health.get('mx'));
    });

    it('a success ends the streak but keeps a back-off in force; the next failure starts over and never shortens it', async () => {
      await a.health.recordFailure('mx', BASE, MAX);
      const second = await a.health.recordFailure('mx', BASE, MAX);
      await b.health.recordSuccess('mx');
      expect(await a.health.get('mx')).toEqual({ failuresInARow: 0, notBefore: second.notBefore });
      const next = await a.health.recordFailure('mx', BASE, MAX);
      expect(next).toEqual({ failuresInARow: 1, notBefore: second.notBefore });
    });

    it('a success after a spent back-off forgets the key', async () => {
      await a.health.recordFailure('mx', 50, 50);
      await sleep(80);
      await b.health.recordSuccess('mx');
      expect(await a.health.get('mx')).toEqual({ failuresInARow: 0, notBefore: 0 });
    });

    it('restUntil rests a key whatever its streak, never shortening a back-off', async () => {
      const until = Date.now() + 60_000;
      await a.health.restUntil('mx', until);
      expect(await b.health.get('mx')).toEqual({ failuresInARow: 0, notBefore: until });
      await b.health.restUntil('mx', until - 30_000);
      expect((await a.health.get('mx')).notBefore).toBe(until);
      expect(await a.health.get('other')).toEqual({ failuresInARow: 0, notBefore: 0 });
    });
  });

  describe('shared caches', () => {
    it('values written by one instance are read by the other until their TTL runs out', async () => {
      const value = { verdict: 'catch_all', hosts: ['mx1', 'mx2'], score: 0.5 };
      await a.cache<typeof value>('catch-all').set('example.org', value, 150);
      expect(await b.cache<typeof value>('catch-all').get('example.org')).toEqual(value);
      await sleep(200);
      expect(await b.cache('catch-all').get('example.org')).toBeUndefined();
    });

    it('keeps namespaces apart and deletes on request', async () => {
      await a.cache<number>('catch-all').set('example.org', 1, 10_000);
      await a.cache<number>('dns-negative').set('example.org', 2, 10_000);
      expect(await b.cache<number>('catch-all').get('example.org')).toBe(1);
      await b.cache('catch-all').delete('example.org');
      expect(await a.cache('catch-all').get('example.org')).toBeUndefined();
      expect(await a.cache<number>('dns-negative').get('example.org')).toBe(2);
    });

    it('refuses a namespace with a colon, which could collide with another namespace', () => {
      expect(() => a.cache('a:b')).toThrow(/must not contain ":"/);
    });
  });

  it('keeps prefixes apart, so that deployments sharing a Redis never meet', async () => {
    const other = testRedis();
    try {
      const stranger = createRedisCoordination(await other.connect(), { keyPrefix: other.prefix });
      await a.slots.tryAcquire('mx', 1, 10_000);
      await a.cache<number>('result').set('k', 1, 10_000);
      expect(await stranger.slots.tryAcquire('mx', 1, 10_000)).not.toBeNull();
      expect(await stranger.cache('result').get('k')).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});
