/**
 * One process's callers of one shared coordination know its slots and health together
 * (src/engine/sessions/shared-politeness.ts, `SharedLaneState`, kept per coordination by the
 * session broker): a batch engine and the single verifications read a host's shared health once
 * between them, and a back-off one of them learnt holds the other back at once and wakes every
 * caller that is still open.
 */
import { describe, expect, it } from 'vitest';
import type { EngineCoordination } from '../../src/engine/coordination.js';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';
import { SessionBroker } from '../../src/engine/sessions/broker.js';
import type { SharedLaneState } from '../../src/engine/sessions/shared-politeness.js';
import { SharedPoliteness } from '../../src/engine/sessions/shared-politeness.js';

const HOST = '192.0.2.25';

/** The in-process coordination, counting its health reads. */
function counted(): { coordination: EngineCoordination; reads: () => number } {
  const coordination = createLocalCoordination();
  let reads = 0;
  const get = coordination.health.get.bind(coordination.health);
  coordination.health.get = (key) => {
    reads += 1;
    return get(key);
  };
  return { coordination, reads: () => reads };
}

function caller(
  coordination: EngineCoordination,
  state: SharedLaneState | undefined,
  changed: () => void = () => undefined,
): SharedPoliteness {
  return new SharedPoliteness(
    coordination,
    { perHostConcurrency: 5, backoffBaseMs: 60_000, backoffMaxMs: 600_000, leaseMs: 15_000 },
    { now: Date.now, random: Math.random, changed, failed: () => undefined },
    state,
  );
}

describe("a process's callers of one coordination, through the session broker", () => {
  it('keeps one state per coordination', () => {
    const broker = new SessionBroker({ perHostConcurrency: 5 });
    const a = createLocalCoordination();
    expect(broker.sharedLanes(a)).toBe(broker.sharedLanes(a));
    expect(broker.sharedLanes(a)).not.toBe(broker.sharedLanes(createLocalCoordination()));
  });

  it("reads a host's shared health once for a batch engine and the single verifications", async () => {
    const { coordination, reads } = counted();
    const broker = new SessionBroker({ perHostConcurrency: 5 });
    const batch = caller(coordination, broker.sharedLanes(coordination));
    const singles = caller(coordination, broker.sharedLanes(coordination));
    const leases = [await batch.acquire(HOST), await singles.acquire(HOST)];
    expect(leases.every((lease) => lease !== null)).toBe(true);
    expect(reads()).toBe(1);
    for (const lease of leases) await batch.release(lease!);

    // Each with its own state (no broker), as before: one read each.
    const other = counted();
    const alone = [caller(other.coordination, undefined), caller(other.coordination, undefined)];
    for (const shared of alone) await shared.release((await shared.acquire(HOST))!);
    expect(other.reads()).toBe(2);
  });

  it('holds the single verifications back from a host the batch engine backed off, and wakes every open caller', async () => {
    const { coordination, reads } = counted();
    const broker = new SessionBroker({ perHostConcurrency: 5 });
    const woken: string[] = [];
    const batch = caller(coordination, broker.sharedLanes(coordination), () => woken.push('batch'));
    const other = caller(coordination, broker.sharedLanes(coordination), () => woken.push('other'));
    const singles = caller(coordination, broker.sharedLanes(coordination));
    other.close();

    batch.recordFailure(HOST);
    await batch.drain();
    expect(woken).toEqual(['batch']);
    const now = Date.now();
    expect(singles.waitUntil(HOST, now)).toBeGreaterThan(now);
    expect(await singles.acquire(HOST)).toBeNull();
    // Known from the batch's failure: not read again.
    expect(reads()).toBe(0);
  });
});
