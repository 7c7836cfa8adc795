/**
 * The result cache of live verifications: a conclusive answer about an address is given again,
 * without a probe, until its status's TTL runs out (docs/api.md, "Result cache"). POST /v1/verify
 * and batch jobs read and fill the same cache.
 *
 * - Scope: one account. Entries are keyed by account and address, so that an answer from the
 *   cache (and its `checked_at`) never tells one account that another asked about the address.
 * - Keys: SHA-256 of the account id and the address as the engine normalises it (local part as
 *   given, domain lower-cased and IDNA), so that key listings (Redis SCAN, MONITOR, slow logs) name
 *   no address. The entry itself is the result, which names the address: protect the store of the
 *   cache like the database.
 * - Expiry: each entry carries its own expiry, judged by the injected clock on every read, so that
 *   memory and Redis expire alike and tests can move time; the store's own eviction (LRU size,
 *   Redis PX) only reclaims space.
 * - Latest wins: a fresh result replaces the entry, and a fresh result of a status that is not
 *   cached (unknown, by default) removes it, so the cache never answers with something older than
 *   the last probe.
 * - Failures: a store that fails (Redis unreachable) is a miss, and a write that fails is dropped;
 *   the caller probes as it would without a cache.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { ResultCacheSettings } from '../../config.js';
import type { Status, VerificationResult, WellFormedAddress } from '../../engine/types.js';
import { providerOfRecords } from '../../engine/smtp/providers.js';
import { addressIdentity, parseAddress } from '../../engine/syntax.js';
import { createMemoryResultStore } from './result-memory-store.js';

export { createMemoryResultStore } from './result-memory-store.js';

/** A result as stored: when it was found out, and until when it may be given again (epoch ms). */
export interface StoredResult {
  result: VerificationResult;
  checkedAt: number;
  expiresAt: number;
}

/** One write: `entry` null removes the key. */
export interface StoreWrite {
  key: string;
  entry: StoredResult | null;
}

/** Where entries live: this process's memory, or Redis shared by every process (src/redis/result-store.ts). */
export interface ResultStore {
  getMany(keys: readonly string[]): Promise<(StoredResult | undefined)[]>;
  setMany(writes: readonly StoreWrite[]): Promise<void>;
}

/** An answer from the cache. */
export interface CachedResult {
  result: VerificationResult;
  /** When the result was found out by a probe. */
  checkedAt: Date;
}

export interface ResultCache {
  /**
   * The cached result of each of `emails` for the account, undefined for a miss. Never rejects.
   * An address already parsed (a single verification's) is not parsed again.
   */
  lookUp(
    accountId: string,
    emails: readonly (string | WellFormedAddress)[],
  ): Promise<(CachedResult | undefined)[]>;
  /** Keeps fresh results of the account, checked at `checkedAt` (default: now). Never rejects. */
  store(accountId: string, results: readonly VerificationResult[], checkedAt?: Date): Promise<void>;
  /**
   * Removes the account's entries of `emails`, as given and with the local part lower-cased (a
   * delivery outcome names the address in the case its mail system used): through Redis, in every
   * process. Never rejects.
   */
  forget(accountId: string, emails: readonly string[]): Promise<void>;
}

export interface ResultCacheOptions {
  store: ResultStore;
  /** Per status; 0: not cached. */
  ttlMs: Readonly<Record<Status, number>>;
  clock: Clock;
  /** Told about a store failure (the caller decides how often to log). */
  onError?: (err: unknown) => void;
}

/**
 * A result cached by a process from before `checks.mx.provider` existed (Redis is shared across a
 * rolling upgrade) gets it from its own MX records, as the engine would have given it.
 */
function withProvider(result: VerificationResult): VerificationResult {
  const mx = result.checks.mx as VerificationResult['checks']['mx'] | undefined;
  if (mx === undefined || mx.provider !== undefined) return result;
  return { ...result, checks: { ...result.checks, mx: { ...mx, provider: providerOfRecords(mx.records) } } };
}

export function createResultCache(options: ResultCacheOptions): ResultCache {
  const { store, ttlMs, clock } = options;
  const onError = options.onError ?? (() => undefined);

  return {
    async lookUp(accountId, emails) {
      const keys = emails.map((email) => cacheKey(accountId, email));
      const asked = keys.flatMap((key) => (key === null ? [] : [key]));
      if (asked.length === 0) return keys.map(() => undefined);
      let found: (StoredResult | undefined)[];
      try {
        found = await store.getMany(asked);
      } catch (err) {
        onError(err);
        return keys.map(() => undefined);
      }
      const now = clock.now().getTime();
      let next = 0;
      return keys.map((key) => {
        if (key === null) return undefined;
        const entry = found[next++];
        if (entry === undefined || entry.expiresAt <= now) return undefined;
        return { result: withProvider(entry.result), checkedAt: new Date(entry.checkedAt) };
      });
    },

    async store(accountId, results, checkedAt = clock.now()) {
      // One write per key (a batch may hold an address twice), the last result winning.
      const writes = new Map<string, StoreWrite>();
      for (const result of results) {
        if (!cacheable(result)) continue;
        // A result's email is its address's identity already (the engine writes parseAddress's).
        const key = identityKey(accountId, result.email);
        const ttl = ttlMs[result.status];
        const at = checkedAt.getTime();
        writes.set(key, { key, entry: ttl > 0 ? { result, checkedAt: at, expiresAt: at + ttl } : null });
      }
      if (writes.size === 0) return;
      try {
        await store.setMany([...writes.values()]);
      } catch (err) {
        onError(err);
      }
    },

    async forget(accountId, emails) {
      const keys = new Set<string>();
      for (const email of emails) {
        for (const form of [email, lowerLocal(email)]) {
          const key = cacheKey(accountId, form);
          if (key !== null) keys.add(key);
        }
      }
      if (keys.size === 0) return;
      try {
        await store.setMany([...keys].map((key) => ({ key, entry: null })));
      } catch (err) {
        onError(err);
      }
    },
  };
}

function lowerLocal(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? email : email.slice(0, at).toLowerCase() + email.slice(at);
}

/**
 * Results of a real verification only: not a malformed address (decided by syntax alone) and not
 * the offline verification that test keys get (`test_mode`), which must never reach the cache.
 */
function cacheable(result: VerificationResult): boolean {
  return result.checks.syntax.passed === true && result.reason !== 'test_mode';
}

/** The key of an address for an account, or null when the string is not an address. */
export function cacheKey(accountId: string, email: string | WellFormedAddress): string | null {
  const parsed = typeof email === 'string' ? parseAddress(email) : email;
  if (!parsed.ok) return null;
  return identityKey(accountId, addressIdentity(parsed));
}

function identityKey(accountId: string, identity: string): string {
  return createHash('sha256').update(accountId).update('\0').update(identity).digest('base64url');
}

/** A cache that holds nothing: every look-up misses (the cache turned off). */
export const NO_RESULT_CACHE: ResultCache = {
  lookUp: (_accountId, emails) => Promise.resolve(emails.map(() => undefined)),
  store: () => Promise.resolve(),
  forget: () => Promise.resolve(),
};

export interface ResultCacheFromSettings {
  settings: Readonly<ResultCacheSettings>;
  clock: Clock;
  /** The store shared by every process (Redis), when scale-out has one; else this process's memory. */
  shared: ResultStore | null;
  onError?: (err: unknown) => void;
}

/** The process's cache from its settings: shared when there is a shared store, none when turned off. */
export function resultCacheFromSettings(options: ResultCacheFromSettings): ResultCache {
  const { settings, shared } = options;
  const off =
    Object.values(settings.ttlMs).every((ttl) => ttl === 0) ||
    (shared === null && (settings.maxEntries === 0 || settings.maxBytes === 0));
  if (off) return NO_RESULT_CACHE;
  return createResultCache({
    store: shared ?? createMemoryResultStore(settings.maxEntries, settings.maxBytes),
    ttlMs: settings.ttlMs,
    clock: options.clock,
    ...(options.onError ? { onError: options.onError } : {}),
  });
}
