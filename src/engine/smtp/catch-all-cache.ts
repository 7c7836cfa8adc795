/**
 * Catch-all answers per domain, written once for the single probe and the batch engine (which
 * adds in-flight probes and the shared cache on top, batch/catch-all.ts): true when the domain's
 * server accepted a random improbable local part, false when it refused it as unknown. Only those
 * two are cached, for `ttlMs`; an inconclusive answer (null) is asked again next time.
 */
import { TtlMap } from '../ttl-map.js';

/** Domains remembered at once; the least recently used go first (batches over very many domains). */
const MAX_DOMAINS = 50_000;

export class CatchAllCache {
  readonly #answers: TtlMap<string, boolean>;
  readonly #ttlMs: number;
  readonly #now: () => number;

  /** `now`: epoch ms. */
  constructor(ttlMs: number, now: () => number, maxDomains = MAX_DOMAINS) {
    this.#answers = new TtlMap(maxDomains, now);
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** The cached answer, or undefined when the domain has none. */
  get(domain: string): boolean | undefined {
    return this.#answers.get(domain);
  }

  /**
   * Caches a conclusive answer until `expiresAt` (epoch ms; default `ttlMs` from now, never later)
   * and returns that expiry; null is not cached and returns null.
   */
  remember(domain: string, value: boolean | null, expiresAt = Infinity): number | null {
    if (value === null) return null;
    const until = Math.min(expiresAt, this.#now() + this.#ttlMs);
    this.#answers.setUntil(domain, value, until);
    return until;
  }
}
