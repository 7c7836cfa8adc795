/**
 * Opens the store: one SQLite file `<dataDir>/mailverdict.db`, through Kysely.
 *
 * Conventions for every table: timestamps are ISO 8601 UTC strings with milliseconds
 * (`2026-01-31T00:00:00.000Z`), which sort correctly as text and read the same in SQLite and
 * PostgreSQL; identifiers are prefixed strings (`acct_…`, `key_…`); booleans are integers 0/1.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from './schema.js';
import {
  openSqliteBackend,
  sqliteCapabilities,
  type ChangeWatch,
  type StoreCapabilities,
} from './dialect/sqlite.js';

export const DATABASE_FILE = 'mailverdict.db';

/** The file that holds the store for a data directory. */
export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

/** Opens (creating the data directory if needed) the database. Run `migrateToLatest` before use. */
export function openDatabase(config: Pick<Config, 'dataDir'>): Kysely<Database> {
  mkdirSync(config.dataDir, { recursive: true });
  const backend = openSqliteBackend(databasePath(config.dataDir), CACHED_TABLES);
  const db = new Kysely<Database>({ dialect: backend.dialect });
  changeWatches.set(db, backend.changes);
  return db;
}

/** The tables that in-memory caches read: keys and their accounts (services/key-cache.ts). */
const CACHED_TABLES = ['api_keys', 'accounts'];

/** The change watch of each database opened here (a transaction or a foreign instance has none). */
const changeWatches = new WeakMap<Kysely<Database>, ChangeWatch>();
const NO_WATCH: ChangeWatch = Object.freeze({ changeToken: () => null });

/**
 * How a cache learns that the store may have changed under it (another process's commit, or a
 * write of this process to a cached table). A database it cannot watch returns a watch whose
 * token is always null: no caching.
 */
export function storeChanges(db: Kysely<Database>): ChangeWatch {
  return changeWatches.get(db) ?? NO_WATCH;
}

/** What the open backend supports. One backend today; the scale-out issue adds PostgreSQL. */
export function storeCapabilities(_db: Kysely<Database>): StoreCapabilities {
  return sqliteCapabilities;
}
