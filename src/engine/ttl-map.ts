/**
 * The engine's one in-process cache shape: a map whose entries expire and whose size is bounded
 * (the least recently used go first), on lru-cache. Catch-all answers, hosts given up on, the
 * last failure of a host and the in-process coordination's caches are all this.
 *
 * Expiry is checked against an injected epoch-ms clock on read, never by timers, so that tests
 * can move time and nothing is left running.
 */
import { LRUCache } from 'lru-cache';

export class TtlMap<K extends string, V> {
  // lru-cache wants `{}`-typed values; the box also lets `undefined` mean "absent" only.
  readonly #entries: LRUCache<K, { value: V; expiresAt: number }>;
  readonly #now: () => number;

  constructor(maxEntries: number, now: () => number) {
    this.#entries = new LRUCache({ max: maxEntries });
    this.#now = now;
  }

  /** The value while it has not expired; undefined otherwise. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.#now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value` until epoch ms `expiresAt`. */
  setUntil(key: K, value: V, expiresAt: number): void {
    this.#entries.set(key, { value, expiresAt });
  }

  /** Keeps `value` for `ttlMs` from now. */
  set(key: K, value: V, ttlMs: number): void {
    this.setUntil(key, value, this.#now() + ttlMs);
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
