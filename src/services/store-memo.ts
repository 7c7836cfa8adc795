/**
 * What a process keeps in memory of the store between requests, good only while the store's
 * change token (store/backend.ts `changes`) stays the same: the token moves when any process
 * commits to a watched table (store/db.ts `CACHED_TABLES`) and when this one writes to one, so
 * nothing kept outlives a change, wherever it was made. The key cache (key-cache.ts) works the
 * same way. One memo per store (a Kysely instance), bounded: past `maxEntries` the oldest goes.
 */
import { storeBackend } from '../store/backend.js';
import type { Executor } from '../store/executor.js';

export interface StoreMemo<V> {
  /**
   * The entries good now, and the token they are good under; null when nothing may be read from
   * memory or kept (inside a transaction, or no token: PostgreSQL not listening).
   */
  current(db: Executor): { token: number; entries: ReadonlyMap<string, V> } | null;
  /** Keeps `value`, read after `token` was current, unless the store has moved on since. */
  keep(db: Executor, token: number, key: string, value: V): void;
}

export function createStoreMemo<V>(maxEntries: number): StoreMemo<V> {
  const memos = new WeakMap<Executor, { token: number; entries: Map<string, V> }>();
  const tokenOf = (db: Executor): number | null =>
    db.isTransaction ? null : storeBackend(db).changes.changeToken();
  return {
    current(db) {
      const token = tokenOf(db);
      if (token === null) return null;
      let memo = memos.get(db);
      if (memo === undefined) memos.set(db, (memo = { token, entries: new Map() }));
      if (memo.token !== token) {
        memo.token = token;
        memo.entries.clear();
      }
      return memo;
    },
    keep(db, token, key, value) {
      const memo = memos.get(db);
      // Read before a change that came while reading: keep nothing (the next read sees it).
      if (memo === undefined || memo.token !== token || tokenOf(db) !== token) return;
      if (!memo.entries.has(key) && memo.entries.size >= maxEntries)
        memo.entries.delete(memo.entries.keys().next().value!);
      memo.entries.set(key, value);
    },
  };
}
