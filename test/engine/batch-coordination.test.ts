/**
 * Batch engines that share a coordination count their sessions per MX host together. Here the
 * in-process coordination, shared by four engines in one process; test/redis/politeness.test.ts
 * runs the same specification with each engine on its own Redis connection.
 */
import { afterEach, expect, it } from 'vitest';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';
import {
  describeSharedPoliteness,
  GREYLIST_DELAY_MS,
  greylistedThenDied,
  greylisting,
  MX_HOST,
  PER_HOST_CAP,
  politenessWorld,
  spreadList,
  statuses,
  type PolitenessWorld,
} from './politeness-kit.js';

describeSharedPoliteness('in-process coordination', () => {
  const coordination = createLocalCoordination();
  return { next: async () => coordination, close: () => coordination.close() };
});

let world: PolitenessWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('engines without a shared coordination each apply their own cap, so together they exceed it', async () => {
  // What the shared specification guards against: the same four engines and list, each engine
  // with its own in-process caps (several processes on one SQLite file without Redis).
  world = await politenessWorld();
  const lists = spreadList(200, 4);
  const w = world;
  const results = await Promise.all(lists.map((list) => w.engine(undefined).verifyMany(list)));
  expect(statuses(results.flat())).toEqual({ 'deliverable/-': 200 });
  expect(world.mta.stats().peakConcurrentByHost[MX_HOST]).toBeGreaterThan(PER_HOST_CAP);
});

it('without a shared coordination, an engine taking over a greylisted address asks it again at once', async () => {
  // What the shared greylist schedule guards against: the dying engine's next try is lost.
  // "At once" by construction, not by a margin a loaded machine could overrun (a 400 ms one failed
  // a run at a load average of 14, issue 20): the dying engine's next try is 10 minutes away, far
  // past the test's own time, so a successor that waited for it could not pass. The successor's
  // own retry delay outlasts the host's greylisting.
  const dyingDelayMs = 10 * 60_000;
  const { mta, asked } = greylisting(GREYLIST_DELAY_MS);
  world = await politenessWorld(mta);
  const address = 'user-grey@d0.test';
  await greylistedThenDied(
    world,
    address,
    world.engine(undefined, { greylistRetries: 2, greylistDelayMs: dyingDelayMs }),
  );
  const results = await world
    .engine(undefined, { greylistRetries: 2, greylistDelayMs: GREYLIST_DELAY_MS })
    .verifyMany([address]);
  expect(statuses(results)).toEqual({ 'deliverable/-': 1 });
  const [first, second] = asked.get(address) ?? [];
  expect(second! - first!).toBeLessThan(dyingDelayMs);
});
