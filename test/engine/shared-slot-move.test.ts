/**
 * A held shared slot moved to the address that Happy Eyeballs connected to
 * (src/engine/sessions/shared-politeness.ts, `SlotHolding.moveTo`), on the in-process coordination:
 * one slot is held at a time, the old one stays when the new address has none free, and a release
 * during a move leaves nothing held.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineCoordination } from '../../src/engine/coordination.js';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';
import type { SlotHolding } from '../../src/engine/sessions/shared-politeness.js';
import { SharedPoliteness } from '../../src/engine/sessions/shared-politeness.js';

const LEASE_MS = 15_000;

let coordination: EngineCoordination;
const holdings: SlotHolding[] = [];

afterEach(async () => {
  await Promise.all(holdings.splice(0).map((holding) => holding.release()));
});

/** A holding of one slot of `key` (cap 1). */
async function hold(key: string): Promise<{ shared: SharedPoliteness; holding: SlotHolding }> {
  const shared = new SharedPoliteness(
    coordination,
    { perHostConcurrency: 1, backoffBaseMs: 1_000, backoffMaxMs: 60_000, leaseMs: LEASE_MS },
    { now: Date.now, random: Math.random, changed: () => undefined, failed: () => undefined },
  );
  const lease = await shared.acquire(key);
  expect(lease).not.toBeNull();
  const holding = shared.hold(lease!);
  holdings.push(holding);
  return { shared, holding };
}

/** Whether `key`'s one slot is free (probed by taking and giving it back). */
async function free(key: string): Promise<boolean> {
  const lease = await coordination.slots.tryAcquire(key, 1, LEASE_MS);
  if (lease !== null) await coordination.slots.release(lease);
  return lease !== null;
}

describe('a held shared slot moved to another key', () => {
  it('takes the new key and gives the old one back', async () => {
    coordination = createLocalCoordination();
    const { holding } = await hold('192.0.2.1');
    expect(await holding.moveTo('2001:db8::1')).toBe(true);
    expect(await free('2001:db8::1')).toBe(false);
    expect(await free('192.0.2.1')).toBe(true);
    await holding.release();
    expect(await free('2001:db8::1')).toBe(true);
  });

  it('keeps the old one when the new key has no slot free', async () => {
    coordination = createLocalCoordination();
    const { holding } = await hold('192.0.2.1');
    await hold('2001:db8::1');
    expect(await holding.moveTo('2001:db8::1')).toBe(false);
    expect(await free('192.0.2.1')).toBe(false);
    expect(holding.slot.lost).toBe(false);
  });

  it('leaves nothing held when released during the move', async () => {
    coordination = createLocalCoordination();
    const { holding } = await hold('192.0.2.1');
    const moved = holding.moveTo('2001:db8::1');
    await holding.release();
    await moved;
    expect(await free('192.0.2.1')).toBe(true);
    expect(await free('2001:db8::1')).toBe(true);
  });
});
