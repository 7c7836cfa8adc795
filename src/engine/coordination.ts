/**
 * What engine instances share so that, together, they stay polite to mail servers: session
 * slots per (egress, MX host), the health (failure streak and back-off) of each such pair, and
 * caches of answers that are the same for every instance (catch-all per domain, negative DNS
 * answers, conclusive results per address).
 *
 * Every operation is asynchronous because the scale-out mode keeps these in Redis, where several
 * worker processes on several machines share them. The engine ships in-process implementations
 * (the default: one process, nothing to start) and never imports a Redis client; the scale-out
 * wiring passes Redis-backed ones built against these same interfaces.
 *
 * Keys are opaque strings chosen by the engine (for instance `${egress}|${mxAddress}`); an
 * implementation adds its own namespace.
 */

/**
 * The back-off of a key after a failure, doubling with each failure in a row up to the maximum
 * (docs/batch-engine.md, "Liveness"). The batch engine's `hostBackoffMs` / `hostBackoffMaxMs`
 * and the single prober default to these.
 */
export const DEFAULT_HOST_BACKOFF_MS = 1_000;
export const DEFAULT_HOST_BACKOFF_MAX_MS = 60_000;

/** One slot held: give it back with `release`, or let `leaseMs` run out if the holder dies. */
export interface SlotLease {
  readonly key: string;
  /** Unique per acquisition; a release or renewal with a lost lease does nothing. */
  readonly token: string;
}

/** A counting semaphore per key whose slots expire when their holder stops renewing them. */
export interface SessionSlots {
  /**
   * Takes one of the `cap` slots of `key` for `leaseMs`; null when all `cap` are held (by this
   * or any other instance).
   */
  tryAcquire(key: string, cap: number, leaseMs: number): Promise<SlotLease | null>;
  /** Extends a lease still held by `leaseMs` from now; false when it had already expired. */
  renew(lease: SlotLease, leaseMs: number): Promise<boolean>;
  release(lease: SlotLease): Promise<void>;
}

/** What is known of a key's failures, shared by every instance. */
export interface HealthState {
  failuresInARow: number;
  /** Epoch ms before which no new session may open for the key; 0 when none. */
  notBefore: number;
}

/** Failure streaks and exponential back-off per key. */
export interface HostHealth {
  get(key: string): Promise<HealthState>;
  /**
   * Counts one failure more and backs the key off for `baseMs × 2^(failures − 1)`, at most `maxMs`
   * (never shortening a back-off already in force). Returns the new state.
   */
  recordFailure(key: string, baseMs: number, maxMs: number): Promise<HealthState>;
  /** The key answered: its failure streak ends (a back-off already in force stays). */
  recordSuccess(key: string): Promise<void>;
  /** Rests the key until `until` (epoch ms) whatever its streak, e.g. after a policy refusal. */
  restUntil(key: string, until: number): Promise<void>;
}

/** A TTL cache shared by every instance. Values must survive JSON. */
export interface SharedCache<V> {
  get(key: string): Promise<V | undefined>;
  set(key: string, value: V, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Everything an engine shares; `createLocalCoordination` builds the in-process one. */
export interface EngineCoordination {
  slots: SessionSlots;
  health: HostHealth;
  /** A cache in its own namespace (`catch-all`, `dns-negative`, `result`...). */
  cache<V>(namespace: string): SharedCache<V>;
  close(): Promise<void>;
}
