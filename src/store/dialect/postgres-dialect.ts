/**
 * The PostgreSQL dialect, put together the way Kysely puts its own together: the pool and its type
 * parsers, the driver (postgres-driver.ts: this process's writes reported to the change watch),
 * the introspector (postgres-introspector.ts: the current schema only), the listening connection
 * that carries the change watch and the work watch (postgres-notifications.ts), and the store
 * backend's operations (postgres-backend.ts), carried by the adapter (store/backend.ts). The
 * sibling sqlite-dialect.ts has the same shape.
 */
import pg from 'pg';
import {
  PostgresAdapter,
  PostgresDialect,
  SelectQueryNode,
  type DatabaseIntrospector,
  type DialectAdapter,
  type Kysely,
  type Driver,
  type PostgresDialectConfig,
} from 'kysely';
import type { BackendAdapter, StoreBackend } from '../backend.js';
import { createSecretBox, type SecretBox } from '../secret-box.js';
import { postgresBackend } from './postgres-backend.js';
import { WatchingPostgresDriver, type WriteWatch } from './postgres-driver.js';
import { CurrentSchemaIntrospector } from './postgres-introspector.js';
import { createPostgresNotifications, type NotificationOptions } from './postgres-notifications.js';
import { namesAnyTable } from './table-names.js';

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
  /** Seals the store's secrets (store/secret-keys.ts); none: a box without a key. */
  secretBox?: SecretBox;
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
  const secretBox = options.secretBox ?? createSecretBox(null);
  return new StorePostgresDialect({ pool }, postgresBackend(notifications), secretBox, {
    notifications,
    writesWatched: (query) => !SelectQueryNode.is(query.query) && namesWatched(query.sql),
  });
}

class PostgresStoreAdapter extends PostgresAdapter implements BackendAdapter {
  constructor(
    readonly storeBackend: StoreBackend,
    readonly secretBox: SecretBox,
  ) {
    super();
  }
}

class StorePostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig;
  readonly #backend: StoreBackend;
  readonly #secretBox: SecretBox;
  readonly #watch: WriteWatch;

  constructor(config: PostgresDialectConfig, backend: StoreBackend, secretBox: SecretBox, watch: WriteWatch) {
    super(config);
    this.#config = config;
    this.#backend = backend;
    this.#secretBox = secretBox;
    this.#watch = watch;
  }

  override createDriver(): Driver {
    return new WatchingPostgresDriver(this.#config, this.#watch);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }

  override createAdapter(): DialectAdapter {
    return new PostgresStoreAdapter(this.#backend, this.#secretBox);
  }
}
