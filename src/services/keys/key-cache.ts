/**
 * Authenticated keys by hash, in memory, so that an authenticated request does not read the
 * store. Only what authentication decides on is kept (the key's id, kind, scopes, prefix and its
 * account's plan and rate limit); usage and quota are never cached. Entries are good only while
 * the store backend's change token (store/backend.ts `storeBackend(db).changes`) stays the same: it moves when another
 * process commits anything to the database and when this process writes a key or an account, so
 * a revocation or a plan change, wherever it is made, empties the cache before the next request
 * is authenticated. Revoked and unknown keys are never cached.
 */
/** A cache of authenticated keys (`V`: services/keys/keys.service.ts `AuthenticatedKey`) by key hash. */
export interface KeyCache<V> {
  /**
   * Brings the cache up to `token` (the store's change token, read before anything else of the
   * request): a different token drops every entry. Returns the entry for `hash`, if any.
   */
  lookup(hash: string, token: number): V | undefined;
  /**
   * Keeps `key`, read from the store after `token` was read, unless the store has moved on
   * since (the token of the cache differs): data read before a change is never kept after it.
   */
  remember(hash: string, key: V, token: number): void;
}

/** Keys kept at most; beyond this the oldest entry goes (an account holds at most 10 keys). */
const DEFAULT_MAX_ENTRIES = 10_000;

export function createKeyCache<V>(maxEntries = DEFAULT_MAX_ENTRIES): KeyCache<V> {
  const entries = new Map<string, V>();
  let current: number | null = null;
  return {
    lookup(hash, token) {
      if (token !== current) {
        entries.clear();
        current = token;
        return undefined;
      }
      return entries.get(hash);
    },
    remember(hash, key, token) {
      if (token !== current) return;
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(hash, key);
    },
  };
}
