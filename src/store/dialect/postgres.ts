/**
 * Everything PostgreSQL-specific lives here: the pool, the type parsers and the store backend's
 * operations (store/backend.ts) that must hold with many processes on one database under READ
 * COMMITTED; the change feed and wake-ups are in dialect/postgres-notifications.ts. The sibling
 * dialect/sqlite-dialect.ts has the same shape.
 */
import pg from 'pg';
import {
  PostgresAdapter,
  PostgresDialect,
  PostgresDriver,
  SelectQueryNode,
  sql,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type DialectAdapter,
  type Kysely,
  type Driver,
  type PostgresDialectConfig,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { BackendAdapter, StoreBackend } from '../backend.js';
import type { Executor } from '../executor.js';
import { insertKeyIfBelow } from '../key.store.js';
import type { ChunkRow } from '../schema/jobs.schema.js';
import {
  createPostgresNotifications,
  type NotificationOptions,
  type PostgresNotifications,
} from './postgres-notifications.js';
import { namesAnyTable } from './table-names.js';
import { CurrentSchemaIntrospector } from './postgres-introspector.js';

/**
 * count(*) is a bigint and sum() a numeric, which pg returns as strings; every count the store
 * reads fits a double, and the store's types say number.
 */
const INT8 = 20;
const NUMERIC = 1700;
const types = new pg.TypeOverrides();
types.setTypeParser(INT8, Number);
types.setTypeParser(NUMERIC, Number);

export interface PostgresOptions {
  url: string;
  poolSize: number;
  /** The tables that in-memory caches read: this process's own writes to them move the change token. */
  watchedTables?: readonly string[];
  /** The listening connection's back-off and heartbeat (tests shorten or lengthen them). */
  notifications?: NotificationOptions;
}

/**
 * A pool for `options.url` wrapped for Kysely; connections open on first use, and so does the
 * one LISTENing connection outside the pool (closed by Kysely's destroy()). A schema other than
 * `public` is chosen in the URL: `?options=-c%20search_path%3Dmyschema`.
 */
export function createPostgresDialect(options: PostgresOptions): PostgresDialect {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    types,
  });
  // A client whose server went away emits 'error': an idle one on the pool, a checked-out one on
  // itself (its socket write fails while the query that wrote it is already failing with the same
  // error). The query's caller gets the error and the pool replaces the client, so the events
  // only need listeners: without them a PostgreSQL restart crashed the process with an uncaught
  // ECONNRESET (test/faults/postgres-outage.test.ts).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const notifications = createPostgresNotifications(options.url, options.notifications);
  const namesWatched = namesAnyTable(options.watchedTables ?? []);
  return new StorePostgresDialect({ pool }, postgresBackend(notifications), {
    notifications,
    writesWatched: (query) => !SelectQueryNode.is(query.query) && namesWatched(query.sql),
  });
}

function postgresBackend(notifications: PostgresNotifications): StoreBackend {
  return Object.freeze({
    name: 'postgres' as const,
    async migrationSchema(db) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      return rows[0]?.schema;
    },
    changes: notifications.changes,
    onWork: (listener) => notifications.onWork(listener),
    claimChunk,
    insertKeyWithinLimit: (db, row, maxActive) =>
      inTransaction(db, async (trx) => {
        // Under READ COMMITTED two INSERT ... SELECT count(*) could both count 9; holding the
        // account row serialises the key creations of one account, and only those.
        await trx.selectFrom('accounts').select('id').where('id', '=', row.account_id).forUpdate().execute();
        return insertKeyIfBelow(trx, row, maxActive);
      }),
  } satisfies StoreBackend);
}

/**
 * One statement per claim, the way graphile-worker and River claim: the candidate is locked with
 * FOR UPDATE SKIP LOCKED, so competing workers each take a different row instead of waiting on,
 * or racing for, the same one. Jobs are taken in order (fewest chunks done, then oldest) and each
 * one's first free chunk is found through the partial index of pending chunks (migration 0004);
 * the first job with one ends the search. Ordering all pending chunks of all jobs instead scanned
 * and sorted every one of them per claim (20,000 queued: about 9 ms a claim, bench:scale).
 */
async function claimChunk(
  db: Executor,
  claim: Parameters<StoreBackend['claimChunk']>[1],
): Promise<ChunkRow | undefined> {
  const inFlight = [...claim.inFlight.keys()].map((key) => key.split('/'));
  const result = await sql<ChunkRow>`
    update job_chunks c
    set lease_owner = ${claim.owner}, lease_expires_at = ${claim.expiresAt}, attempts = c.attempts + 1
    from (
      select pick.job_id, pick.seq
      from (
        select id from jobs
        where status in ('queued', 'processing')
        order by chunks_done, created_at, id
      ) j
      cross join lateral (
        select jc.job_id, jc.seq
        from job_chunks jc
        where jc.job_id = j.id
          and jc.state = 'pending'
          and (jc.lease_owner is null or jc.lease_expires_at < ${claim.now})
          and (jc.job_id, jc.seq) not in (
            select * from unnest(${inFlight.map((k) => k[0]!)}::text[], ${inFlight.map((k) => Number(k[1]))}::int[])
          )
        order by jc.seq
        limit 1
        for update skip locked
      ) pick
      limit 1
    ) pick
    where c.job_id = pick.job_id and c.seq = pick.seq
    returning c.*`.execute(db);
  return result.rows[0];
}

/** Runs `fn` in the caller's transaction, or in a new one when `db` is not a transaction. */
function inTransaction<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

class PostgresStoreAdapter extends PostgresAdapter implements BackendAdapter {
  constructor(readonly storeBackend: StoreBackend) {
    super();
  }
}

interface WriteWatch {
  notifications: PostgresNotifications;
  /** Whether a statement may have written a watched table: not a SELECT, and names one. */
  writesWatched(query: CompiledQuery): boolean;
}

/**
 * Reports this process's writes to watched tables as soon as they are made (once more when
 * their transaction ends, committed or not: whatever was cached meanwhile is dropped), and
 * closes the listening connection with the pool.
 */
class WatchingPostgresDriver extends PostgresDriver {
  readonly #watch: WriteWatch;
  readonly #connections = new WeakMap<DatabaseConnection, WatchedConnection>();

  constructor(config: PostgresDialectConfig, watch: WriteWatch) {
    super(config);
    this.#watch = watch;
  }

  override async init(): Promise<void> {
    await super.init();
    this.#watch.notifications.enable();
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    let connection = this.#connections.get(inner);
    if (!connection) {
      connection = new WatchedConnection(inner, this.#watch);
      this.#connections.set(inner, connection);
    }
    return connection;
  }

  override async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    await super.beginTransaction(connection, settings);
    (connection as WatchedConnection).inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.commitTransaction(connection);
    } finally {
      (connection as WatchedConnection).endTransaction();
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } finally {
      (connection as WatchedConnection).endTransaction();
    }
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // The connection super.acquireConnection() returned (its class is not exported).
    await super.releaseConnection((connection as WatchedConnection).inner as PoolConnection);
  }

  override async destroy(): Promise<void> {
    await this.#watch.notifications.close();
    await super.destroy();
  }
}

type PoolConnection = Parameters<PostgresDriver['releaseConnection']>[0];

class WatchedConnection implements DatabaseConnection {
  inTransaction = false;
  readonly #watch: WriteWatch;
  #wroteWatched = false;

  constructor(
    readonly inner: DatabaseConnection,
    watch: WriteWatch,
  ) {
    this.#watch = watch;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(query);
    if (result.numAffectedRows !== BigInt(0) && this.#watch.writesWatched(query)) {
      this.#watch.notifications.localChange();
      if (this.inTransaction) this.#wroteWatched = true;
    }
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }

  endTransaction(): void {
    this.inTransaction = false;
    if (this.#wroteWatched) {
      this.#wroteWatched = false;
      this.#watch.notifications.localChange();
    }
  }
}

class StorePostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig;
  readonly #backend: StoreBackend;
  readonly #watch: WriteWatch;

  constructor(config: PostgresDialectConfig, backend: StoreBackend, watch: WriteWatch) {
    super(config);
    this.#config = config;
    this.#backend = backend;
    this.#watch = watch;
  }

  override createDriver(): Driver {
    return new WatchingPostgresDriver(this.#config, this.#watch);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }

  override createAdapter(): DialectAdapter {
    return new PostgresStoreAdapter(this.#backend);
  }
}
