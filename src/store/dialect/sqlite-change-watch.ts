/**
 * SQLite's change watch (StoreBackend.changes): tells the in-memory caches whether the tables
 * they read may have changed since they read them.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { ChangeWatch } from '../backend.js';
import type { StatementWatcher } from './sqlite-statement-cache.js';
import { namesAnyTable } from './table-names.js';

/**
 * `PRAGMA data_version` changes, on a connection, exactly when another connection has committed
 * to the file since the last time it was read; it does not change for the connection's own
 * writes, which are caught instead as they are prepared (Kysely prepares every statement it runs,
 * just before running it). Inside a transaction the token is null: a cache must not answer while
 * the connection may hold uncommitted writes or an older snapshot.
 */
export function watchChanges(
  sqlite: BetterSqlite3.Database,
  watchedTables: readonly string[],
): { changes: ChangeWatch; watcher: StatementWatcher } {
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  const namesWatched = namesAnyTable(watchedTables);
  let epoch = 0;
  let lastDataVersion: unknown = null;
  const changes: ChangeWatch = {
    changeToken() {
      if (!sqlite.open || sqlite.inTransaction) return null;
      const version = dataVersion.get();
      if (version !== lastDataVersion) {
        lastDataVersion = version;
        epoch++;
      }
      return epoch;
    },
  };
  const watcher: StatementWatcher = {
    // A statement that may write a watched table: any that is not a plain read and names one.
    matches: (sql, statement) => (!statement.reader || /\breturning\b/i.test(sql)) && namesWatched(sql),
    beforeRun: () => {
      epoch++;
    },
  };
  return { changes, watcher };
}
