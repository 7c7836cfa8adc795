/**
 * The SQLite dialect, put together the way Kysely puts its own together: the file opened with the
 * pragmas the service relies on (better-sqlite3.ts picks the build), the driver
 * (sqlite-driver.ts: IMMEDIATE transactions), the statement cache (sqlite-statement-cache.ts), the
 * change watch (sqlite-change-watch.ts), the work watch (sqlite-work-watch.ts) and the store
 * backend's operations (sqlite-backend.ts), carried by the adapter (store/backend.ts). Store files
 * write portable SQL that PostgreSQL also runs; postgres-dialect.ts is the sibling.
 */
import {
  SqliteAdapter,
  SqliteDialect,
  type DialectAdapter,
  type Driver,
  type SqliteDialectConfig,
} from 'kysely';
import type { BackendAdapter, StoreBackend } from '../backend.js';
import { createSecretBox, type SecretBox } from '../secret-box.js';
import { Sqlite } from './better-sqlite3.js';
import { sqliteBackend } from './sqlite-backend.js';
import { watchChanges } from './sqlite-change-watch.js';
import { BUSY_TIMEOUT_MS, ImmediateTransactionDriver } from './sqlite-driver.js';
import { withStatementCache } from './sqlite-statement-cache.js';
import { watchQueuedWork } from './sqlite-work-watch.js';

/**
 * Opens the SQLite file with the pragmas the service relies on and wraps it for Kysely, watching
 * it for changes: `watchedTables` are the tables that in-memory caches read (a write of this
 * connection to one of them moves the change token; another process's commit to any table
 * moves it too). `secretBox` seals the store's secrets (store/secret-keys.ts; none given: a box
 * without a key, which opens legacy plaintext only).
 */
export function createSqliteDialect(
  file: string,
  watchedTables: readonly string[] = [],
  secretBox: SecretBox = createSecretBox(null),
): SqliteDialect {
  const sqlite = new Sqlite(file);
  // WAL: readers never block the writer, and several processes (serve + worker) share the file.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last commits.
  sqlite.pragma('synchronous = NORMAL');
  const watch = watchChanges(sqlite, watchedTables);
  const work = watchQueuedWork(sqlite);
  // Kysely's destroy() closes the connection.
  return new ImmediateSqliteDialect(
    { database: withStatementCache(sqlite, [watch.watcher, work.watcher]) },
    sqliteBackend(watch.changes, work.onWork),
    secretBox,
    work.transactionEnded,
    (ms) => sqlite.pragma(`busy_timeout = ${ms}`),
  );
}

class SqliteStoreAdapter extends SqliteAdapter implements BackendAdapter {
  constructor(
    readonly storeBackend: StoreBackend,
    readonly secretBox: SecretBox,
  ) {
    super();
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #backend: StoreBackend;
  readonly #secretBox: SecretBox;
  readonly #transactionEnded: (committed: boolean) => void;
  readonly #setBusyTimeout: (ms: number) => void;

  constructor(
    config: SqliteDialectConfig,
    backend: StoreBackend,
    secretBox: SecretBox,
    transactionEnded: (committed: boolean) => void,
    setBusyTimeout: (ms: number) => void,
  ) {
    super(config);
    this.#config = config;
    this.#backend = backend;
    this.#secretBox = secretBox;
    this.#transactionEnded = transactionEnded;
    this.#setBusyTimeout = setBusyTimeout;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.#config, this.#transactionEnded, this.#setBusyTimeout);
  }

  override createAdapter(): DialectAdapter {
    return new SqliteStoreAdapter(this.#backend, this.#secretBox);
  }
}
