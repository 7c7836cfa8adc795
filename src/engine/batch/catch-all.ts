/**
 * Catch-all answers per domain for the batch engine: one random-local-part RCPT per domain
 * decides for every accepted recipient of that domain. Answers are kept in the single probe's
 * cache (smtp/catch-all-cache.ts: true/false only, for `catchAllTtlMs`); while a probe is in
 * flight, accepted recipients of the domain wait for its answer instead of probing again. Given a
 * shared cache, answers are also written there and a domain this engine knows nothing of is
 * looked up there first, so that other workers' answers spare it the probe.
 */
import type { SharedCache } from '../coordination.js';
import { CatchAllCache } from '../smtp/catch-all-cache.js';
import type { BackgroundTasks } from '../background.js';

type Waiter = (catchAll: boolean | null) => void;

/** A domain's answer as shared: the expiry travels with it so that a copy never outlives it. */
export interface SharedCatchAll {
  catchAll: boolean;
  /** Epoch ms. */
  expiresAt: number;
}

export interface SharedCatchAllAnswers {
  cache: SharedCache<SharedCatchAll>;
  /** Where the writes go (awaited when the engine closes). */
  background: BackgroundTasks;
  failed(error: unknown, operation: string): void;
}

export class CatchAllTracker {
  readonly #now: () => number;
  readonly #cache: CatchAllCache;
  readonly #probing = new Map<string, Waiter[]>();
  readonly #shared: SharedCatchAllAnswers | null;

  constructor(ttlMs: number, now: () => number, shared: SharedCatchAllAnswers | null = null) {
    this.#cache = new CatchAllCache(ttlMs, now);
    this.#now = now;
    this.#shared = shared;
  }

  /** True when answers are shared with other engines (`load` then asks them). */
  get shared(): boolean {
    return this.#shared !== null;
  }

  /**
   * Takes another engine's answer for `domain` into the cache when this one has none and probes
   * none. Never rejects: a shared cache that fails is a miss.
   */
  async load(domain: string): Promise<void> {
    if (this.#shared === null || this.cached(domain) !== undefined || this.#probing.has(domain)) return;
    let answer: SharedCatchAll | undefined;
    try {
      answer = await this.#shared.cache.get(domain);
    } catch (error) {
      this.#shared.failed(error, 'cache');
      return;
    }
    if (answer === undefined || typeof answer.catchAll !== 'boolean') return;
    if (answer.expiresAt > this.#now() && this.cached(domain) === undefined)
      this.#cache.remember(domain, answer.catchAll, answer.expiresAt);
  }

  /** The cached answer, or undefined when the domain has none. */
  cached(domain: string): boolean | undefined {
    return this.#cache.get(domain);
  }

  isProbing(domain: string): boolean {
    return this.#probing.has(domain);
  }

  /** Marks a probe as in flight; the caller queues the probe RCPT. */
  begin(domain: string): void {
    if (!this.#probing.has(domain)) this.#probing.set(domain, []);
  }

  /**
   * Calls `waiter` with the domain's answer: at once when cached or when no probe is in flight
   * (null: not tested), otherwise when the probe in flight is decided.
   */
  whenDecided(domain: string, waiter: Waiter): void {
    const waiting = this.#probing.get(domain);
    if (waiting !== undefined) {
      waiting.push(waiter);
      return;
    }
    waiter(this.cached(domain) ?? null);
  }

  /** The probe's answer: true/false are cached, null (inconclusive) is not. */
  decide(domain: string, value: boolean | null): void {
    const expiresAt = this.#cache.remember(domain, value);
    if (value !== null && expiresAt !== null) {
      const answer: SharedCatchAll = { catchAll: value, expiresAt };
      this.#shared?.background.track('cache', this.#shared.cache.set(domain, answer, this.#cache.ttlMs));
    }
    const waiting = this.#probing.get(domain) ?? [];
    this.#probing.delete(domain);
    for (const waiter of waiting) waiter(value);
  }
}
