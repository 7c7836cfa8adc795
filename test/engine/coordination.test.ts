/**
 * The in-process coordination (what engines share within one process, and the model of the Redis
 * one in test/redis/coordination.test.ts), on an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';

function coordinationAt(start = 1_000_000) {
  const clock = { t: start };
  return { clock, coordination: createLocalCoordination({ now: () => clock.t }) };
}

describe('in-process coordination', () => {
  describe('session slots', () => {
    it('gives at most cap slots of a key, and one more once a slot is released', async () => {
      const { coordination } = coordinationAt();
      const leases = await Promise.all(
        Array.from({ length: 5 }, () => coordination.slots.tryAcquire('mx', 3, 1000)),
      );
      const held = leases.filter((l) => l !== null);
      expect(held).toHaveLength(3);
      expect(await coordination.slots.tryAcquire('other', 3, 1000)).not.toBeNull();
      await coordination.slots.release(held[0]!);
      expect(await coordination.slots.tryAcquire('mx', 3, 1000)).not.toBeNull();
    });

    it('a lease that is not renewed expires; a renewed one outlives its first term', async () => {
      const { clock, coordination } = coordinationAt();
      const renewed = (await coordination.slots.tryAcquire('mx', 2, 1000))!;
      const lapsing = (await coordination.slots.tryAcquire('mx', 2, 1000))!;
      clock.t += 600;
      expect(await coordination.slots.renew(renewed, 1000)).toBe(true);
      clock.t += 600;
      expect(await coordination.slots.renew(lapsing, 1000)).toBe(false);
      // The lapsed slot is free again; the renewed one is still held.
      expect(await coordination.slots.tryAcquire('mx', 2, 1000)).not.toBeNull();
      expect(await coordination.slots.tryAcquire('mx', 2, 1000)).toBeNull();
    });

    it('a release with a lost lease does nothing to the slot another holds now', async () => {
      const { clock, coordination } = coordinationAt();
      const lost = (await coordination.slots.tryAcquire('mx', 1, 100))!;
      clock.t += 200;
      const current = (await coordination.slots.tryAcquire('mx', 1, 1000))!;
      await coordination.slots.release(lost);
      expect(await coordination.slots.tryAcquire('mx', 1, 1000)).toBeNull();
      await coordination.slots.release(current);
      expect(await coordination.slots.tryAcquire('mx', 1, 1000)).not.toBeNull();
    });
  });

  describe('host health', () => {
    it('doubles the back-off with each failure in a row, up to the max', async () => {
      const { clock, coordination } = coordinationAt();
      const delays: number[] = [];
      for (let i = 0; i < 5; i++)
        delays.push((await coordination.health.recordFailure('mx', 100, 500)).notBefore - clock.t);
      expect(delays).toEqual([100, 200, 400, 500, 500]);
      expect((await coordination.health.get('mx')).failuresInARow).toBe(5);
    });

    it('a success ends the streak but keeps a back-off in force', async () => {
      const { clock, coordination } = coordinationAt();
      await coordination.health.recordFailure('mx', 100, 1000);
      await coordination.health.recordFailure('mx', 100, 1000);
      await coordination.health.recordSuccess('mx');
      expect(await coordination.health.get('mx')).toEqual({ failuresInARow: 0, notBefore: clock.t + 200 });
      // The next failure starts the streak over and never shortens the back-off in force.
      expect(await coordination.health.recordFailure('mx', 100, 1000)).toEqual({
        failuresInARow: 1,
        notBefore: clock.t + 200,
      });
    });
  });

  describe('caches', () => {
    it('keep a value until its TTL runs out, one namespace apart from another', async () => {
      const { clock, coordination } = coordinationAt();
      await coordination.cache<boolean>('catch-all').set('example.org', true, 1000);
      expect(await coordination.cache<boolean>('catch-all').get('example.org')).toBe(true);
      expect(await coordination.cache<boolean>('dns-negative').get('example.org')).toBeUndefined();
      clock.t += 1000;
      expect(await coordination.cache<boolean>('catch-all').get('example.org')).toBeUndefined();
    });
  });
});
