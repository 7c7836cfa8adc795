/**
 * Batch engines that share a coordination count their sessions per MX host together. Here the
 * in-process coordination, shared by four engines in one process; test/redis/politeness.test.ts
 * runs the same specification with each engine on its own Redis connection.
 */
import { afterEach, expect, it } from 'vitest';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';
import {
  describeSharedPoliteness,
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
  // "At once" is measured against a delay long enough that a loaded machine's slowness (the
  // successor's DNS and connection) cannot pass for waiting it: with 400 ms it failed a run at a
  // load average of 14 (issue 20).
  const delayMs = 3_000;
  const { mta, asked } = greylisting(delayMs);
  world = await politenessWorld(mta);
  const address = 'user-grey@d0.test';
  const tuning = { greylistRetries: 2, greylistDelayMs: delayMs };
  await greylistedThenDied(world, address, world.engine(undefined, tuning));
  const results = await world.engine(undefined, tuning).verifyMany([address]);
  expect(statuses(results)).toEqual({ 'deliverable/-': 1 });
  const [first, second] = asked.get(address) ?? [];
  expect(second! - first!).toBeLessThan(delayMs);
});
