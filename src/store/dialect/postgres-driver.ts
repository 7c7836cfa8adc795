/**
 * The PostgreSQL driver: Kysely's, reporting this process's writes to the watched tables to the
 * change watch (postgres-notifications.ts) as soon as they are made, and closing the listening
 * connection with the pool.
 */
import {
  PostgresDriver,
  type CompiledQuery,
  type DatabaseConnection,
  type PostgresDialectConfig,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { PostgresNotifications } from './postgres-notifications.js';

export interface WriteWatch {
  notifications: PostgresNotifications;
  /** Whether a statement may have written a watched table: not a SELECT, and names one. */
  writesWatched(query: CompiledQuery): boolean;
}

/**
 * Reports this process's writes to watched tables as soon as they are made (once more when
 * their transaction ends, committed or not: whatever was cached meanwhile is dropped), and
 * closes the listening connection with the pool.
 */
export class WatchingPostgresDriver extends PostgresDriver {
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
