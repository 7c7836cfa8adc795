/**
 * Catch-all answers per domain for the batch engine: one random-local-part RCPT per domain
 * decides for every accepted recipient of that domain. Answers are cached (true/false only, for
 * `catchAllTtlMs`, as the single probe does); while a probe is in flight, accepted recipients
 * of the domain wait for its answer instead of probing again.
 */

const MAX_ENTRIES = 50_000;

type Waiter = (catchAll: boolean | null) => void;

export class CatchAllTracker {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { value: boolean; expiresAt: number }>();
  readonly #probing = new Map<string, Waiter[]>();

  constructor(ttlMs: number, now: () => number) {
    this.#ttlMs = ttlMs;
    this.#now = now;
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
      this.#cache.delete(domain);
      if (this.#cache.size >= MAX_ENTRIES) {
        const oldest = this.#cache.keys().next();
        if (oldest.done !== true) this.#cache.delete(oldest.value);
      }
      this.#cache.set(domain, { value, expiresAt: this.#now() + this.#ttlMs });
    }
    const waiting = this.#probing.get(domain) ?? [];
    this.#probing.delete(domain);
    for (const waiter of waiting) waiter(value);
  }
}
