/**
 * What GET /v1/account/usage (and the dashboard's overview) reads of an account, kept in memory
 * for a short while so that a client polling its usage does not cost a database round trip per
 * request. On PostgreSQL that round trip is most of the route's cost: a CPU profile found 30% of
 * the process in `writev` for it, and the route ran at 48% of SQLite's rate (docs/benchmarks.md,
 * scale-out part b); with this cache it runs at the rate of the rest of the API.
 *
 * Freshness (docs/api.md, "Usage"): counts and refunds made by this process empty the account's
 * entry before they start and again when they end, so a client that counts and then reads
 * through the same process always sees its own counts; a count made by another process (another
 * API process behind the load balancer, a worker refunding a failed job) shows within `ttlMs`
 * (1 s by default). A change of plan or limits empties the cache as it does the key cache (the
 * store's change token). Quota itself is never decided from this cache: `consumeQuota` is one
 * conditional update in the store.
 */
import { LRUCache } from 'lru-cache';
import { storeBackend, type ChangeWatch } from '../../store/backend.js';
import type { Executor } from '../../store/executor.js';
import type { AccountWithPeriod } from '../../store/usage.store.js';

/** Accounts kept at most; beyond this the least recently read goes. */
const MAX_ACCOUNTS = 10_000;

export interface UsageCache {
  /** The account's cached row, if read less than the TTL ago and nothing changed since. */
  lookup(accountId: string): AccountWithPeriod | undefined;
  /**
   * Reads through the cache: `read` runs when there is no fresh entry, and its answer is kept
   * only if nothing of the account changed while it ran.
   */
  read(
    accountId: string,
    read: () => Promise<AccountWithPeriod | undefined>,
  ): Promise<AccountWithPeriod | undefined>;
  /** This process is counting or refunding for the account: forget what was read of it. */
  invalidate(accountId: string): void;
}

export function createUsageCache(options: { ttlMs: number; changes: ChangeWatch }): UsageCache {
  const entries =
    options.ttlMs > 0
      ? new LRUCache<string, { row: AccountWithPeriod; token: number }>({
          max: MAX_ACCOUNTS,
          ttl: options.ttlMs,
        })
      : null;
  // Bumped by every invalidation of the account: a read that started before one is not kept.
  const generations = new Map<string, number>();

  const lookup = (accountId: string): AccountWithPeriod | undefined => {
    const entry = entries?.get(accountId);
    if (!entry) return undefined;
    if (entry.token !== options.changes.changeToken()) {
      entries?.clear();
      return undefined;
    }
    return entry.row;
  };

  return {
    lookup,
    async read(accountId, read) {
      const cached = lookup(accountId);
      if (cached) return cached;
      const token = options.changes.changeToken();
      const generation = generations.get(accountId) ?? 0;
      const row = await read();
      const unchanged =
        token !== null &&
        token === options.changes.changeToken() &&
        generation === (generations.get(accountId) ?? 0);
      if (row && entries && unchanged) entries.set(accountId, { row, token });
      return row;
    },
    invalidate(accountId) {
      entries?.delete(accountId);
      // The counter only has to differ from the one a concurrent read saw; wrapping is harmless.
      generations.set(accountId, ((generations.get(accountId) ?? 0) + 1) % Number.MAX_SAFE_INTEGER);
      if (generations.size > MAX_ACCOUNTS) generations.clear();
    },
  };
}

/** The usage cache of a store opened by store/db.ts, emptied by that store's change token. */
export function createStoreUsageCache(db: Executor, ttlMs: number): UsageCache {
  return createUsageCache({ ttlMs, changes: storeBackend(db).changes });
}
