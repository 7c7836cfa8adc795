/**
 * Everything SQLite-specific lives here: the driver, the pragmas and what the backend can do.
 * Store files write portable SQL (RETURNING, ON CONFLICT, CASE) that PostgreSQL also runs; a
 * PostgreSQL backend adds a sibling file (dialect/postgres.ts) with the same shape.
 */
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect, type SqliteDatabase } from 'kysely';

/** What a backend supports; store code may branch on these flags, never on a dialect name. */
export interface StoreCapabilities {
  /** `INSERT/UPDATE ... RETURNING`. */
  returning: boolean;
  /** `INSERT ... ON CONFLICT ... DO UPDATE/NOTHING`. */
  onConflict: boolean;
  /** Several connections can run statements at the same time (PostgreSQL pool: true). */
  concurrentConnections: boolean;
}

export const sqliteCapabilities: StoreCapabilities = Object.freeze({
  returning: true,
  onConflict: true,
  concurrentConnections: false,
});

/** How long a writer waits for another process's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/** Opens the SQLite file with the pragmas the service relies on and wraps it for Kysely. */
export function createSqliteDialect(file: string): SqliteDialect {
  const sqlite = new BetterSqlite3(file);
  // WAL: readers never block the writer, and several processes (serve + worker) share the file.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last commits.
  sqlite.pragma('synchronous = NORMAL');
  // Kysely's destroy() closes the connection.
  return new SqliteDialect({ database: withStatementCache(sqlite) });
}

/** Statements kept prepared; beyond this the oldest is dropped (batch inserts vary in shape). */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query anew; preparing is most of the cost of a small query on
 * better-sqlite3 (about 10% of a POST /v1/verify request's CPU time in a profile of
 * `npm run bench:api`). Statements are reused by SQL text, except one still being iterated
 * (a streamed result), which gets a fresh statement.
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached && !cached.busy) return cached;
      const statement = sqlite.prepare(sql);
      if (!cached) {
        if (cache.size >= STATEMENT_CACHE_SIZE) {
          const oldest = cache.keys().next();
          if (!oldest.done) cache.delete(oldest.value);
        }
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}
