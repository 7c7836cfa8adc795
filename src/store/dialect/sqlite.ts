/**
 * Everything SQLite-specific lives here: the driver, the pragmas and what the backend can do.
 * Store files write portable SQL (RETURNING, ON CONFLICT, CASE) that PostgreSQL also runs; a
 * PostgreSQL backend adds a sibling file (dialect/postgres.ts) with the same shape.
 */
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect } from 'kysely';

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
  return new SqliteDialect({ database: sqlite });
}
