/**
 * Opens the store: PostgreSQL when `databaseUrl` is set (many processes on many machines),
 * otherwise one SQLite file `<dataDir>/mailverdict.db` (one machine, nothing to run), both
 * through Kysely. What each backend does its own way travels with the database object
 * (store/backend.ts).
 *
 * Conventions for every table: timestamps are ISO 8601 UTC strings with milliseconds
 * (`2026-01-31T00:00:00.000Z`), which sort correctly as text and read the same in SQLite and
 * PostgreSQL; identifiers are prefixed strings (`acct_…`, `key_…`); booleans are integers 0/1.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from './schema.js';
import { createPostgresDialect } from './dialect/postgres-dialect.js';
import { createSqliteDialect } from './dialect/sqlite-dialect.js';
import { loadSecretBox } from './secret-keys.js';

export const DATABASE_FILE = 'mailverdict.db';

/** The file that holds the store for a data directory. */
export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

export type StoreSettings = Pick<Config, 'dataDir'> &
  Partial<Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'secrets'>>;

/**
 * Opens the database (creating the SQLite data directory, and its secret key, if needed), with
 * the secret box that seals the secrets it keeps (store/secret-keys.ts). Run `migrateToLatest`
 * before use.
 */
export function openDatabase(config: StoreSettings): Kysely<Database> {
  if (config.databaseUrl) {
    return new Kysely<Database>({
      dialect: createPostgresDialect({
        url: config.databaseUrl,
        poolSize: config.databasePoolSize ?? 10,
        watchedTables: CACHED_TABLES,
        secretBox: loadSecretBox(config),
      }),
    });
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  ownerOnly(databasePath(config.dataDir));
  return new Kysely<Database>({
    dialect: createSqliteDialect(databasePath(config.dataDir), CACHED_TABLES, loadSecretBox(config)),
  });
}

/**
 * The store holds hashed keys and passwords, uploaded lists and secrets: readable by its owner
 * only (issue 16). A new data directory is 0700; the database file is created 0600 before SQLite
 * opens it (SQLite gives its -wal and -shm files the database file's mode), and an existing
 * one, or its -wal and -shm, readable by others is narrowed to 0600.
 */
function ownerOnly(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (!existsSync(path) || (statSync(path).mode & 0o077) === 0) continue;
    try {
      chmodSync(path, 0o600);
    } catch {
      // Not this user's file (a store shared on purpose): its owner chose its mode.
    }
  }
}

/**
 * The tables that in-memory caches read: keys and their accounts (services/keys/key-cache.ts), the
 * accounts' filters and the addresses' delivery outcomes (services/store-memo.ts). One token for
 * all: an outcome taken empties the key cache too (a key is then read again once).
 */
const CACHED_TABLES = ['api_keys', 'accounts', 'account_filters', 'outcome_events'];
