/**
 * Catch-all answers per domain for the batch engine: one random-local-part RCPT per domain
 * decides for every accepted recipient of that domain. Answers are cached (true/false only, for
 * `catchAllTtlMs`, as the single probe does); while a probe is in flight, accepted recipients
 * of the domain wait for its answer instead of probing again. Given a shared cache, answers are
 * also written there and a domain this engine knows nothing of is looked up there first, so that
 * other workers' answers spare it the probe.
 */
import type { SharedCache } from '../coordination.js';
import type { BackgroundTasks } from './background.js';

const MAX_ENTRIES = 50_000;

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
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { value: boolean; expiresAt: number }>();
  readonly #probing = new Map<string, Waiter[]>();
  readonly #shared: SharedCatchAllAnswers | null;

  constructor(ttlMs: number, now: () => number, shared: SharedCatchAllAnswers | null = null) {
    this.#ttlMs = ttlMs;
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
    const expiresAt = Math.min(answer.expiresAt, this.#now() + this.#ttlMs);
    if (expiresAt > this.#now() && this.cached(domain) === undefined)
      this.#remember(domain, answer.catchAll, expiresAt);
  }

  /** The cached answer, or undefined when the domain has none. */
  cached(domain: string): boolean | undefined {
    const entry = this.#cache.get(domain);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.#now()) return entry.value;
    this.#cache.delete(domain);
    return undefined;
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
    if (value !== null) {
      const expiresAt = this.#now() + this.#ttlMs;
      this.#remember(domain, value, expiresAt);
      const answer: SharedCatchAll = { catchAll: value, expiresAt };
      this.#shared?.background.track('cache', this.#shared.cache.set(domain, answer, this.#ttlMs));
    }
    const waiting = this.#probing.get(domain) ?? [];
    this.#probing.delete(domain);
    for (const waiter of waiting) waiter(value);
  }

  #remember(domain: string, value: boolean, expiresAt: number): void {
    this.#cache.delete(domain);
    if (this.#cache.size >= MAX_ENTRIES) {
      const oldest = this.#cache.keys().next();
      if (oldest.done !== true) this.#cache.delete(oldest.value);
    }
    this.#cache.set(domain, { value, expiresAt });
  }
}
