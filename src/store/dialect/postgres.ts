/**
 * Everything PostgreSQL-specific lives here: the pool, the type parsers and the store backend's
 * operations (store/backend.ts) that must hold with many processes on one database under READ
 * COMMITTED. The sibling dialect/sqlite.ts has the same shape.
 */
import pg from 'pg';
import {
  PostgresAdapter,
  PostgresDialect,
  sql,
  type DialectAdapter,
  type PostgresDialectConfig,
} from 'kysely';
import type { BackendAdapter, ChangeWatch, StoreBackend } from '../backend.js';
import type { Executor } from '../executor.js';
import { insertKeyIfBelow } from '../key.store.js';
import type { ChunkRow } from '../schema/jobs.schema.js';

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
}

/**
 * A pool for `options.url` wrapped for Kysely; connections open on first use. A schema other than
 * `public` is chosen in the URL: `?options=-c%20search_path%3Dmyschema`.
 */
export function createPostgresDialect(options: PostgresOptions): PostgresDialect {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    types,
  });
  // An idle client whose server went away emits 'error' on the pool; the next query gets a fresh
  // connection, so the event only needs a listener (without one it would crash the process).
  pool.on('error', () => {});
  return new StorePostgresDialect({ pool }, postgresBackend());
}

/** No cross-process change feed yet: caches of store data are off (the token is always null). */
const NO_CHANGE_FEED: ChangeWatch = Object.freeze({ changeToken: () => null });

function postgresBackend(): StoreBackend {
  return Object.freeze({
    name: 'postgres' as const,
    async migrationSchema(db) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      return rows[0]?.schema;
    },
    changes: NO_CHANGE_FEED,
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
 * or racing for, the same one.
 */
async function claimChunk(
  db: Executor,
  claim: Parameters<StoreBackend['claimChunk']>[1],
): Promise<ChunkRow | undefined> {
  const result = await sql<ChunkRow>`
    update job_chunks c
    set lease_owner = ${claim.owner}, lease_expires_at = ${claim.expiresAt}, attempts = c.attempts + 1
    from (
      select jc.job_id, jc.seq
      from job_chunks jc
      join jobs j on j.id = jc.job_id
      where jc.state = 'pending'
        and j.status in ('queued', 'processing')
        and (jc.lease_owner is null or jc.lease_expires_at < ${claim.now})
        and not (jc.job_id || '/' || jc.seq = any(${[...claim.inFlight.keys()]}::text[]))
      order by j.chunks_done, j.created_at, jc.job_id, jc.seq
      limit 1
      for update of jc skip locked
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

class StorePostgresDialect extends PostgresDialect {
  readonly #backend: StoreBackend;

  constructor(config: PostgresDialectConfig, backend: StoreBackend) {
    super(config);
    this.#backend = backend;
  }

  override createAdapter(): DialectAdapter {
    return new PostgresStoreAdapter(this.#backend);
  }
}
