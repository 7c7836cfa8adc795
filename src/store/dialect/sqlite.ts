/**
 * Everything SQLite-specific lives here: the driver, the pragmas, the change watch, the statement
 * cache and the store backend's operations (store/backend.ts). Store files write portable SQL
 * that PostgreSQL also runs; dialect/postgres.ts is the sibling with the same shape.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Sqlite } from './sqlite-driver.js';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import type { BackendAdapter, ChangeWatch, StoreBackend } from '../backend.js';
import { claimChunk, findClaimableChunks } from '../chunk.store.js';
import { insertKeyIfBelow } from '../key.store.js';

/** How long a writer waits for another process's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the SQLite file with the pragmas the service relies on and wraps it for Kysely, watching
 * it for changes: `watchedTables` are the tables that in-memory caches read (a write of this
 * connection to one of them moves the change token; another process's commit to any table
 * moves it too).
 */
export function createSqliteDialect(file: string, watchedTables: readonly string[] = []): SqliteDialect {
  const sqlite = new Sqlite(file);
  // WAL: readers never block the writer, and several processes (serve + worker) share the file.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last commits.
  sqlite.pragma('synchronous = NORMAL');
  const watch = watchChanges(sqlite, watchedTables);
  // Kysely's destroy() closes the connection.
  return new ImmediateSqliteDialect(
    { database: withStatementCache(sqlite, watch.writesWatched, watch.localWrite) },
    sqliteBackend(watch.changes),
  );
}

/**
 * One connection runs every statement in turn, so a claim cannot race inside this process, and
 * IMMEDIATE transactions serialise writers across processes: a candidate query, then a
 * conditional UPDATE per candidate that only succeeds while the chunk is still free.
 */
function sqliteBackend(changes: ChangeWatch): StoreBackend {
  return Object.freeze({
    name: 'sqlite' as const,
    changes,
    migrationSchema: () => Promise.resolve(undefined),
    async claimChunk(db, claim) {
      for (const ref of await findClaimableChunks(db, claim.now, 8)) {
        if (claim.inFlight.has(`${ref.job_id}/${ref.seq}`)) continue;
        const chunk = await claimChunk(db, ref, claim.owner, claim.now, claim.expiresAt);
        if (chunk) return chunk;
      }
      return undefined;
    },
    // One INSERT ... SELECT ... WHERE count < max: SQLite runs one writer at a time.
    insertKeyWithinLimit: insertKeyIfBelow,
  } satisfies StoreBackend);
}

class SqliteStoreAdapter extends SqliteAdapter implements BackendAdapter {
  constructor(readonly storeBackend: StoreBackend) {
    super();
  }
}

/**
 * Transactions begin IMMEDIATE, taking the write lock up front. A deferred transaction that reads
 * and then writes fails at once with SQLITE_BUSY (the busy timeout does not apply to the upgrade)
 * when another process (`serve` and a separate `worker`) committed in between; an immediate one
 * waits on busy_timeout instead.
 */
class ImmediateTransactionDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #backend: StoreBackend;

  constructor(config: SqliteDialectConfig, backend: StoreBackend) {
    super(config);
    this.#config = config;
    this.#backend = backend;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new SqliteStoreAdapter(this.#backend);
  }
}

/**
 * `PRAGMA data_version` changes, on a connection, exactly when another connection has committed
 * to the file since the last time it was read; it does not change for the connection's own
 * writes, which are caught instead as they are prepared (Kysely prepares every statement it runs,
 * just before running it). Inside a transaction the token is null: a cache must not answer while
 * the connection may hold uncommitted writes or an older snapshot.
 */
function watchChanges(sqlite: BetterSqlite3.Database, watchedTables: readonly string[]) {
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  const names = watchedTables.map((t) => new RegExp(`(^|[^a-z0-9_])${t}($|[^a-z0-9_])`, 'i'));
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
  return {
    changes,
    /** Whether a statement may write a watched table: any statement that is not a plain read and names one. */
    writesWatched: (sql: string, statement: BetterSqlite3.Statement): boolean => {
      if (names.length === 0) return false;
      if (statement.reader && !/\breturning\b/i.test(sql)) return false;
      return names.some((name) => name.test(sql));
    },
    localWrite: (): void => {
      epoch++;
    },
  };
}

/** Statements kept prepared; beyond this the oldest is dropped (batch inserts vary in shape). */
const STATEMENT_CACHE_SIZE = 256;

interface CachedStatement {
  statement: BetterSqlite3.Statement;
  writesWatched: boolean;
}

/**
 * Kysely prepares every query anew; preparing is most of the cost of a small query on
 * better-sqlite3 (about 10% of a POST /v1/verify request's CPU time in a profile of
 * `npm run bench:api`). Statements are reused by SQL text, except one still being iterated
 * (a streamed result), which gets a fresh statement. A statement that may write a watched
 * table calls `onWatchedWrite` each time it is about to run.
 */
function withStatementCache(
  sqlite: BetterSqlite3.Database,
  writesWatched: (sql: string, statement: BetterSqlite3.Statement) => boolean,
  onWatchedWrite: () => void,
): SqliteDatabase {
  const cache = new Map<string, CachedStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached) {
        if (cached.writesWatched) onWatchedWrite();
        if (!cached.statement.busy) return cached.statement;
        return sqlite.prepare(sql);
      }
      const statement = sqlite.prepare(sql);
      const entry = { statement, writesWatched: writesWatched(sql, statement) };
      if (entry.writesWatched) onWatchedWrite();
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(sql, entry);
      return statement;
    },
  };
}
