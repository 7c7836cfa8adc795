/**
 * Everything SQLite-specific lives here: the driver, the pragmas, the change watch, the in-process
 * wake-up of workers, the statement cache and the store backend's operations (store/backend.ts).
 * Store files write portable SQL that PostgreSQL also runs; dialect/postgres.ts is the sibling
 * with the same shape.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Sqlite } from './better-sqlite3.js';
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
import { namesAnyTable } from './table-names.js';

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
  const work = watchQueuedWork(sqlite);
  // Kysely's destroy() closes the connection.
  return new ImmediateSqliteDialect(
    { database: withStatementCache(sqlite, [watch.watcher, work.watcher]) },
    sqliteBackend(watch.changes, work.onWork),
    work.transactionEnded,
    (ms) => sqlite.pragma(`busy_timeout = ${ms}`),
  );
}

/**
 * One connection runs every statement in turn, so a claim cannot race inside this process, and
 * IMMEDIATE transactions serialise writers across processes: a candidate query, then a
 * conditional UPDATE per candidate that only succeeds while the chunk is still free.
 */
function sqliteBackend(changes: ChangeWatch, onWork: StoreBackend['onWork']): StoreBackend {
  return Object.freeze({
    name: 'sqlite' as const,
    changes,
    onWork,
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

/** Longest pause between two tries for the write lock at the start of a transaction. */
const BEGIN_RETRY_MAX_PAUSE_MS = 20;

function isBusy(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'SQLITE_BUSY';
}

/**
 * Transactions begin IMMEDIATE, taking the write lock up front. A deferred transaction that reads
 * and then writes fails at once with SQLITE_BUSY (the busy timeout does not apply to the upgrade)
 * when another process (`serve` and a separate `worker`) committed in between; an immediate one
 * waits for the lock instead, up to BUSY_TIMEOUT_MS.
 *
 * That wait is done here, asking again after short pauses, rather than by busy_timeout: SQLite's
 * own wait blocks the thread, so the event loop stood still while another connection held the
 * lock, and when that connection was this process's own (a transaction between two awaits, as
 * the store tests' several "processes" in one are), it could not finish and the wait always ran
 * out (60 concurrent counts of the quota on 4 connections: 8 counted, 263 s).
 */
class ImmediateTransactionDriver extends SqliteDriver {
  readonly #ended: (committed: boolean) => void;
  readonly #setBusyTimeout: (ms: number) => void;

  constructor(
    config: SqliteDialectConfig,
    ended: (committed: boolean) => void,
    setBusyTimeout: (ms: number) => void,
  ) {
    super(config);
    this.#ended = ended;
    this.#setBusyTimeout = setBusyTimeout;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const deadline = performance.now() + BUSY_TIMEOUT_MS;
    for (let pause = 1; ; pause = Math.min(2 * pause, BEGIN_RETRY_MAX_PAUSE_MS)) {
      // better-sqlite3 runs the statement synchronously inside executeQuery, so the timeout is
      // back before any other statement of this connection can run.
      this.#setBusyTimeout(0);
      try {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
        return;
      } catch (err) {
        if (!isBusy(err) || performance.now() >= deadline) throw err;
      } finally {
        this.#setBusyTimeout(BUSY_TIMEOUT_MS);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    this.#ended(true);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await super.rollbackTransaction(connection);
    this.#ended(false);
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #backend: StoreBackend;
  readonly #transactionEnded: (committed: boolean) => void;
  readonly #setBusyTimeout: (ms: number) => void;

  constructor(
    config: SqliteDialectConfig,
    backend: StoreBackend,
    transactionEnded: (committed: boolean) => void,
    setBusyTimeout: (ms: number) => void,
  ) {
    super(config);
    this.#config = config;
    this.#backend = backend;
    this.#transactionEnded = transactionEnded;
    this.#setBusyTimeout = setBusyTimeout;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.#config, this.#transactionEnded, this.#setBusyTimeout);
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

/** Kysely's SQL for a job insert (store/job.store.ts insertJob). */
const INSERTS_JOB = /^\s*insert\s+into\s+"?jobs"?[\s(]/i;

/**
 * Tells this process's workers (the embedded worker of `serve`) about a job this process queued,
 * as soon as its transaction commits, instead of at their next poll. SQLite cannot tell other
 * processes: a standalone `mailverdict worker` on the same file finds the job by polling.
 */
function watchQueuedWork(sqlite: BetterSqlite3.Database) {
  const listeners = new Set<() => void>();
  let queuedInTransaction = false;
  const announce = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const watcher: StatementWatcher = {
    matches: (sql) => INSERTS_JOB.test(sql),
    beforeRun: () => {
      if (sqlite.inTransaction) queuedInTransaction = true;
      // Outside a transaction the insert commits as it runs, synchronously right after this
      // (better-sqlite3): a microtask comes after it.
      else queueMicrotask(announce);
    },
  };
  return {
    watcher,
    onWork: (listener: () => void): (() => void) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    transactionEnded: (committed: boolean): void => {
      const queued = queuedInTransaction;
      queuedInTransaction = false;
      if (queued && committed) announce();
    },
  };
}

/** Statements kept prepared; beyond this the oldest is dropped (batch inserts vary in shape). */
const STATEMENT_CACHE_SIZE = 256;

/** Told each time a statement it matches (decided once per SQL text) is about to run. */
interface StatementWatcher {
  matches(sql: string, statement: BetterSqlite3.Statement): boolean;
  readonly beforeRun: () => void;
}

interface CachedStatement {
  statement: BetterSqlite3.Statement;
  /** The beforeRun of the watchers that match it. */
  beforeRun: (() => void)[];
}

/**
 * Kysely prepares every query anew; preparing is most of the cost of a small query on
 * better-sqlite3 (about 10% of a POST /v1/verify request's CPU time in a profile of
 * `npm run bench:api`). Statements are reused by SQL text, except one still being iterated
 * (a streamed result), which gets a fresh statement. Kysely prepares a statement just before
 * running it, so the watchers that match it are told then.
 */
function withStatementCache(
  sqlite: BetterSqlite3.Database,
  watchers: readonly StatementWatcher[],
): SqliteDatabase {
  const cache = new Map<string, CachedStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached) {
        for (const hook of cached.beforeRun) hook();
        if (!cached.statement.busy) return cached.statement;
        return sqlite.prepare(sql);
      }
      const statement = sqlite.prepare(sql);
      const entry = {
        statement,
        beforeRun: watchers.filter((w) => w.matches(sql, statement)).map((w) => w.beforeRun),
      };
      for (const hook of entry.beforeRun) hook();
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      cache.set(sql, entry);
      return statement;
    },
  };
}
