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
import { createSqliteDialect, sqliteCapabilities, type StoreCapabilities } from './dialect/sqlite.js';

export const DATABASE_FILE = 'mailverdict.db';

/** The file that holds the store for a data directory. */
export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

/** Opens (creating the data directory if needed) the database. Run `migrateToLatest` before use. */
export function openDatabase(config: Pick<Config, 'dataDir'>): Kysely<Database> {
  mkdirSync(config.dataDir, { recursive: true });
  return new Kysely<Database>({ dialect: createSqliteDialect(databasePath(config.dataDir)) });
}

/** What the open backend supports. One backend today; the scale-out issue adds PostgreSQL. */
export function storeCapabilities(_db: Kysely<Database>): StoreCapabilities {
  return sqliteCapabilities;
}
