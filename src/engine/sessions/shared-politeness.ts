/**
 * The scheduler's use of the engine's coordination (../coordination.ts) when politeness is shared
 * with other processes (Redis in the scale-out mode). Keys are lanes, (egress, host) pairs
 * (../egress/egress.ts): before a session on a lane opens, one of its `perHostConcurrency` slots is
 * taken from the shared semaphore, as a lease renewed every third of its length while the session
 * runs and released when it ends; failures, successes and rests after a policy refusal go to the
 * shared health, and a lane that any process backed off or rested gets no new session here
 * either.
 *
 * A lane of a known mail provider also takes one of its provider's `providerConcurrency` slots
 * (`<egress>|provider:<name>`, held like the host's) and one of its `providerSessionsPerSecond`
 * pace slots (`pace:<egress>|provider:<name>`, never given back: each runs out a second after it
 * was taken, so at most that many sessions open in any second), both in the same semaphore.
 *
 * The scheduler's pump is synchronous and this is not: the pump asks `waitUntil` (what is known
 * now) and starts at most one `acquire` per host at a time. A failed coordination call never
 * opens a session: it counts as "no slot", is retried after a short wait, and is reported.
 */
import type { EngineCoordination, HealthState, SlotLease } from '../coordination.js';
import { BackgroundTasks } from '../background.js';
import { PACE_WINDOW_MS } from './provider-pace.js';

export interface SharedPolitenessOptions {
  perHostConcurrency: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Lease of one slot; renewed every third of it while its session runs. */
  leaseMs: number;
  /** Sessions to one provider's hosts together, per egress. Default: no cap. */
  providerConcurrency?: number;
  /** Sessions opened to one provider's hosts in any second, per egress. Default: no pace. */
  providerSessionsPerSecond?: number;
}

export interface SharedPolitenessDeps {
  /** Epoch ms. */
  now(): number;
  /** In [0, 1): the jitter of the retry waits. */
  random(): number;
  /** Something was learnt that may let a session open or that needs a wake-up: pump. */
  changed(): void;
  /** A coordination call failed (`operation`: acquire, renew, release, health). */
  failed(error: unknown, operation: string): void;
}

/** What a running session holds. */
export interface HeldSlot {
  /** True once the lease could not be kept: the session ends after its round trip. */
  readonly lost: boolean;
  /** The holding's `moveTo`; absent where no shared slot is held. */
  readonly moveTo?: (key: string) => Promise<boolean>;
}

/** A session's slot while it runs: renewed in the background until `release`. */
export interface SlotHolding {
  readonly slot: HeldSlot;
  /**
   * Moves the host's slot to `key` (Happy Eyeballs connected to another address of the host than
   * the one it was taken for): takes one of `key`'s slots, then gives the old one back. False,
   * the old one still held, when `key` has none free or the coordination failed. Never rejects.
   */
  moveTo(key: string): Promise<boolean>;
  /** Stops renewing and gives the slot back (never rejects). */
  release(): Promise<void>;
}

/**
 * How long a host's shared health is trusted before it is asked again. A back-off another process
 * starts is seen here at most this late; asking on every session open would add a round trip to
 * each, for a state that changes only when a host fails.
 */
const HEALTH_CACHE_MS = 1_000;
/** After "no slot", a host is asked again after a random wait in this range, so processes do not ask in step. */
const RETRY_MIN_MS = 50;
const RETRY_MAX_MS = 200;

/**
 * What a process knows of the shared slots and health of one coordination, for all its callers
 * together: the session broker (broker.ts) keeps one per coordination, so that its batch engines
 * and its single verifications read a host's shared health once a second between them (not once
 * each), see a back-off or a rest that one of them learnt at once, and wait out the same retry
 * wait after "no slot". Each caller keeps its own `SharedPoliteness` over it: its lease and pace
 * settings, its `changed` and `failed` callbacks, and its own health updates in flight (`drain`).
 */
export class SharedLaneState {
  readonly health = new Map<string, { state: HealthState; fetchedAt: number }>();
  readonly retryAt = new Map<string, number>();
  readonly #listeners = new Set<() => void>();

  /** Calls `changed` whenever a caller learnt something that may let a session open; returns the end. */
  listen(changed: () => void): () => void {
    const entry = (): void => changed();
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

export class SharedPoliteness {
  readonly #coordination: EngineCoordination;
  readonly #options: SharedPolitenessOptions;
  readonly #deps: SharedPolitenessDeps;
  readonly #health: Map<string, { state: HealthState; fetchedAt: number }>;
  readonly #retryAt: Map<string, number>;
  readonly #state: SharedLaneState;
  readonly #unlisten: () => void;
  /** Health updates in flight, awaited by `drain`. */
  readonly #background: BackgroundTasks;

  /** `state`: what this process's other callers of `coordination` know too (default: this one's own). */
  constructor(
    coordination: EngineCoordination,
    options: SharedPolitenessOptions,
    deps: SharedPolitenessDeps,
    state: SharedLaneState = new SharedLaneState(),
  ) {
    this.#coordination = coordination;
    this.#options = options;
    this.#deps = deps;
    this.#state = state;
    this.#health = state.health;
    this.#retryAt = state.retryAt;
    this.#unlisten = state.listen(() => deps.changed());
    this.#background = new BackgroundTasks((error, operation) => deps.failed(error, operation));
  }

  /** Epoch ms before which no session to `key` should be tried (shared back-off, or a retry wait); 0: now. */
  waitUntil(key: string, now: number): number {
    const at = Math.max(this.#retryAt.get(key) ?? 0, this.#health.get(key)?.state.notBefore ?? 0);
    return at > now ? at : 0;
  }

  /**
   * One shared slot of `key`; null when all are held (by any process), when the host turns out to
   * be backed off, or when the coordination failed. `waitUntil` then says when to ask again.
   */
  async acquire(key: string): Promise<SlotLease | null> {
    try {
      let cached = this.#health.get(key);
      if (cached === undefined || this.#deps.now() - cached.fetchedAt >= HEALTH_CACHE_MS) {
        cached = { state: await this.#coordination.health.get(key), fetchedAt: this.#deps.now() };
        this.#health.set(key, cached);
      }
      // Also when another caller of the process read it or learnt the back-off (SharedLaneState).
      if (cached.state.notBefore > this.#deps.now()) return null;
      const lease = await this.#coordination.slots.tryAcquire(
        key,
        this.#options.perHostConcurrency,
        this.#options.leaseMs,
      );
      if (lease === null) this.#retryLater(key);
      else this.#retryAt.delete(key);
      return lease;
    } catch (error) {
      this.#deps.failed(error, 'acquire');
      this.#retryLater(key);
      return null;
    }
  }

  /**
   * A new session's slots: one of lane `key`, then, with its provider `group`, one of the group's
   * (cap and pace). Null, none held, when either is not given.
   */
  async acquireLane(key: string, group: string | null): Promise<SlotLease[] | null> {
    const lease = await this.acquire(key);
    if (lease === null || group === null) return lease === null ? null : [lease];
    const providerLease = await this.acquireGroup(group);
    if (providerLease !== null) return [lease, providerLease];
    await this.release(lease);
    return null;
  }

  /**
   * One slot of `group` (a provider through one egress) and one of its pace; null when either is
   * full (by any process) or the coordination failed, and `waitUntil(group)` then says when to ask
   * again. The pace slot is spent even if the session then does not open.
   */
  async acquireGroup(group: string): Promise<SlotLease | null> {
    const { providerConcurrency, providerSessionsPerSecond, leaseMs } = this.#options;
    let lease: SlotLease | null = null;
    try {
      lease = await this.#coordination.slots.tryAcquire(
        group,
        providerConcurrency ?? Number.MAX_SAFE_INTEGER,
        leaseMs,
      );
      if (lease === null) {
        this.#retryLater(group);
        return null;
      }
      if (
        providerSessionsPerSecond !== undefined &&
        (await this.#coordination.slots.tryAcquire(
          `pace:${group}`,
          providerSessionsPerSecond,
          PACE_WINDOW_MS,
        )) === null
      ) {
        await this.release(lease);
        this.#retryLater(group);
        return null;
      }
      this.#retryAt.delete(group);
      return lease;
    } catch (error) {
      this.#deps.failed(error, 'acquire');
      if (lease !== null) await this.release(lease);
      this.#retryLater(group);
      return null;
    }
  }

  /** Keeps `lease` while its session runs. */
  hold(lease: SlotLease): SlotHolding {
    const { leaseMs, perHostConcurrency } = this.#options;
    const slot = { lost: false };
    let held = lease;
    let renewedAt = this.#deps.now();
    let renewing: Promise<void> | null = null;
    let moving: Promise<boolean> | null = null;
    let released = false;
    const renew = async (): Promise<void> => {
      const renewed = held;
      try {
        if (await this.#coordination.slots.renew(renewed, leaseMs)) renewedAt = this.#deps.now();
        // A lease that a move gave back meanwhile is not lost: its successor is held.
        else if (renewed === held) slot.lost = true;
      } catch (error) {
        this.#deps.failed(error, 'renew');
        // Two renewals missed: stop while the lease still has a third to run, so that the session
        // has ended before another process can be given the slot.
        if (this.#deps.now() - renewedAt >= leaseMs / 2) slot.lost = true;
      } finally {
        renewing = null;
      }
    };
    const timer = setInterval(() => {
      if (renewing === null && !slot.lost) renewing = renew();
    }, leaseMs / 3);
    const move = async (key: string): Promise<boolean> => {
      try {
        const next = await this.#coordination.slots.tryAcquire(key, perHostConcurrency, leaseMs);
        if (next === null) return false;
        // A release meanwhile waits for the move, then gives back the slot held.
        const old = held;
        held = next;
        renewedAt = this.#deps.now();
        await this.release(old);
        return true;
      } catch (error) {
        this.#deps.failed(error, 'acquire');
        return false;
      } finally {
        moving = null;
      }
    };
    return {
      slot,
      moveTo: (key) => {
        if (key === held.key) return Promise.resolve(true);
        if (released || moving !== null || slot.lost) return Promise.resolve(false);
        moving = move(key);
        return moving;
      },
      release: async () => {
        released = true;
        clearInterval(timer);
        await renewing;
        await moving;
        await this.release(held);
      },
    };
  }

  /** Gives `lease` back (never rejects: a lease that cannot be given back runs out by itself). */
  async release(lease: SlotLease): Promise<void> {
    try {
      await this.#coordination.slots.release(lease);
    } catch (error) {
      this.#deps.failed(error, 'release');
    }
    // A slot was just freed here: this process may ask again at once.
    this.#retryAt.delete(lease.key);
  }

  /** A session to `key` failed: the shared streak grows and the shared back-off starts or lengthens. */
  recordFailure(key: string): void {
    this.#background.track(
      'health',
      this.#coordination.health
        .recordFailure(key, this.#options.backoffBaseMs, this.#options.backoffMaxMs)
        .then((state) => {
          this.#health.set(key, { state, fetchedAt: this.#deps.now() });
          // Every caller of the process: a batch engine's pump, whichever learnt it.
          this.#state.changed();
        }),
    );
  }

  /** `key` rests until epoch ms `until` for every process (an egress refused by policy). */
  restUntil(key: string, until: number): void {
    this.#background.track(
      'health',
      this.#coordination.health.restUntil(key, until).then(() => {
        const cached = this.#health.get(key);
        const state = cached?.state ?? { failuresInARow: 0, notBefore: 0 };
        this.#health.set(key, {
          state: { ...state, notBefore: Math.max(state.notBefore, until) },
          fetchedAt: this.#deps.now(),
        });
      }),
    );
  }

  /**
   * A session to `key` got an answer about a recipient: the shared streak ends. Skipped while the
   * host was last seen without failures (the common case, a round trip per session saved): a
   * streak another process started since then runs on, which only lengthens its next back-off.
   */
  recordSuccess(key: string): void {
    if (this.#health.get(key)?.state.failuresInARow === 0) return;
    this.#background.track(
      'health',
      this.#coordination.health.recordSuccess(key).then(() => {
        const cached = this.#health.get(key);
        if (cached !== undefined) cached.state = { ...cached.state, failuresInARow: 0 };
      }),
    );
  }

  /**
   * `key` has no queue any more: what is known of it is asked again when it has one (by every
   * caller sharing the state: one more health read for them, at most).
   */
  forget(key: string): void {
    this.#health.delete(key);
    this.#retryAt.delete(key);
  }

  /** Resolves when the health updates in flight have ended. */
  async drain(): Promise<void> {
    await this.#background.drain();
  }

  /** Its caller closes: what the others learn no longer calls its `changed`. */
  close(): void {
    this.#unlisten();
  }

  #retryLater(key: string): void {
    const wait = RETRY_MIN_MS + this.#deps.random() * (RETRY_MAX_MS - RETRY_MIN_MS);
    this.#retryAt.set(key, this.#deps.now() + wait);
  }
}
