/**
 * Provider-wide politeness in one process: the cap over all of a provider's MX hosts (counted as
 * the server sees connections), shared by engines on the in-process coordination and kept by one
 * engine's own limiter; the same hosts under names of no provider get only their per-host caps;
 * and the pace of new sessions, with the clock standing still. test/redis/provider-politeness.test.ts
 * runs the shared specification on Redis.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';
import { waitFor } from '../kit/wait-for.js';
import { statuses } from './politeness-kit.js';
import {
  PER_HOST_CAP,
  PROVIDER_CAP,
  PROVIDER_HOSTS,
  describeProviderPoliteness,
  providerWorld,
  type ProviderWorld,
} from './provider-politeness-kit.js';

describeProviderPoliteness('in-process coordination', () => {
  const coordination = createLocalCoordination();
  return { next: async () => coordination, close: () => coordination.close() };
});

let world: ProviderWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

it('one engine on its own keeps to the provider cap across the provider’s MX hosts', async () => {
  world = await providerWorld();
  const [list] = world.list(160);
  const results = await world.engine(undefined).verifyMany(list!);
  expect(statuses(results)).toEqual({ 'deliverable/-': 160 });
  expect(world.peak()).toBeLessThanOrEqual(PROVIDER_CAP);
});

it('the same hosts under names of no provider get only their per-host caps, so together more', async () => {
  // What the provider cap guards against: six hosts at two sessions each.
  world = await providerWorld();
  const [list] = world.list(160, 'plain');
  const results = await world.engine(undefined).verifyMany(list!);
  expect(statuses(results)).toEqual({ 'deliverable/-': 160 });
  for (const result of results) expect(result.checks.mx.provider).toBeNull();
  expect(world.peak()).toBeGreaterThan(PROVIDER_CAP);
  expect(world.peak()).toBeLessThanOrEqual(PER_HOST_CAP * PROVIDER_HOSTS.length);
});

it('opens no more than the pace’s sessions to a provider while the clock stands still', async () => {
  world = await providerWorld(0);
  const clock = new ManualClock();
  const pace = 2;
  const engine = world.engine(
    undefined,
    { providerConcurrency: 100, providerSessionsPerSecond: pace, recipientsPerSession: 1 },
    { clock },
  );
  const [list] = world.list(12);
  const run = engine.verifyMany(list!);
  run.catch(() => undefined); // rejected by the close below
  const connections = (): number => world!.mta.stats().connections;
  await waitFor('the first sessions', async () => (connections() >= pace ? true : undefined), 5_000, 20);
  // The pace's wake-up comes every (real) second: two of them find the clock where it was.
  await sleep(2_200);
  expect(connections()).toBe(pace);
  clock.advance(1_000);
  await waitFor(
    'the next second’s sessions',
    async () => (connections() >= 2 * pace ? true : undefined),
    5_000,
    20,
  );
  await sleep(2_200);
  expect(connections()).toBe(2 * pace);
  await engine.close();
});

it('engines without a shared coordination each apply their own provider cap, so together they exceed it', async () => {
  // What the shared specification guards against (processes on one store without Redis).
  world = await providerWorld();
  const w = world;
  const lists = w.list(240, 'tenant', 3);
  const results = await Promise.all(lists.map((list) => w.engine(undefined).verifyMany(list)));
  expect(statuses(results.flat())).toEqual({ 'deliverable/-': 240 });
  expect(world.peak()).toBeGreaterThan(PROVIDER_CAP);
});

it('single verifications keep to the provider cap too, warm sessions and all', async () => {
  world = await providerWorld();
  const verifier = world.verifier();
  const [list] = world.list(60);
  const results = await Promise.all(list!.map((address) => verifier.verify(address)));
  expect(results.map((r) => r.status)).toEqual(list!.map(() => 'deliverable'));
  expect(world.peak()).toBeLessThanOrEqual(PROVIDER_CAP);
});

it('single verifications to the same hosts under plain names get only their per-host caps', async () => {
  world = await providerWorld();
  const verifier = world.verifier();
  const [list] = world.list(60, 'plain');
  const results = await Promise.all(list!.map((address) => verifier.verify(address)));
  expect(results.map((r) => r.status)).toEqual(list!.map(() => 'deliverable'));
  expect(world.peak()).toBeGreaterThan(PROVIDER_CAP);
});
