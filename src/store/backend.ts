/**
 * What each store backend (SQLite, PostgreSQL) does its own way, carried by the database object
 * itself: Kysely builds a dialect's driver, adapter and compiler together, and every Kysely
 * instance and transaction of a database shares its adapter. Our dialects (store/dialect/*.ts)
 * give theirs a `storeBackend`, so a store function reaches the backend's operations from the
 * executor it was handed, a transaction included, with no registry on the side.
 *
 * Everything else in store/ is portable SQL (RETURNING, ON CONFLICT, CASE) that both run.
 */
import type { QueryExecutor } from 'kysely';
import { setTimeout as delay } from 'node:timers/promises';
import { STEP_PAUSE_MS } from './dialect/sqlite-driver.js';
import type { Executor } from './executor.js';
import type { SecretBox } from './secret-box.js';
import type { ApiKeyRow, NewApiKeyRow } from './schema/accounts.schema.js';
import type { ChunkRow } from './schema/jobs.schema.js';

/**
 * Tells an in-memory cache of store data whether that data may have changed since it was read.
 * A backend that cannot tell returns null, and nothing may be served from such a cache.
 */
export interface ChangeWatch {
  /**
   * A number that changes whenever another process may have committed a change to a watched
   * table (SQLite: any commit by another connection; PostgreSQL: a notification from the
   * table's trigger) or this process has written to one; null when it cannot tell (SQLite:
   * inside a transaction; PostgreSQL: while the listening connection is not LISTENing).
   */
  changeToken(): number | null;
}

export interface ChunkClaim {
  /** The worker taking the lease. */
  owner: string;
  /** ISO time now: a lease that expired before it is free. */
  now: string;
  /** ISO time the new lease ends unless renewed. */
  expiresAt: string;
  /** Chunks this worker is still running (`job_id/seq`): never claimed again by it. */
  inFlight: { has(key: string): boolean; keys(): Iterable<string> };
}

export interface StoreBackend {
  readonly name: 'sqlite' | 'postgres';
  /**
   * The schema the migration tables belong in (PostgreSQL: the connection's current schema, which
   * `search_path` in the URL's `options` may set; Kysely's migrator would otherwise look in all
   * schemas); undefined where there are none (SQLite).
   */
  migrationSchema(db: Executor): Promise<string | undefined>;
  /**
   * The names of the migrations the store records as run (Kysely's migration table in the
   * migration schema), or null when it has no migration table yet: one query, so that a process
   * opening a store that is up to date need not start Kysely's migrator, whose checks list every
   * column of every schema of the database (store/migrate.ts).
   */
  migrationsRun(db: Executor): Promise<string[] | null>;
  readonly changes: ChangeWatch;
  /**
   * Calls `listener` when work may be waiting for a worker: a job was queued or a chunk handed
   * back (PostgreSQL: by any process, through NOTIFY at its commit; SQLite: by this process, at
   * its commit, since SQLite has nothing to tell other processes), or the backend may have missed
   * such news (PostgreSQL: its listening connection came back). A hint: workers still poll.
   * Returns what removes the listener.
   */
  onWork(listener: () => void): () => void;
  /**
   * Leases one free chunk (pending, never leased or its lease expired, its job queued or
   * processing, its account not suspended) to `claim.owner`, counting an attempt; the job with the fewest done chunks goes
   * first. Two workers never get the same chunk. Undefined when nothing is free.
   */
  claimChunk(db: Executor, claim: ChunkClaim): Promise<ChunkRow | undefined>;
  /**
   * Inserts a key unless its account already holds `maxActive` active keys; two concurrent
   * creations cannot both pass. Undefined when the limit is reached. `db` is a transaction (the
   * caller's: a store function opens none); PostgreSQL holds the account row until it ends.
   */
  insertKeyWithinLimit(db: Executor, row: NewApiKeyRow, maxActive: number): Promise<ApiKeyRow | undefined>;
}

/** An adapter that carries its backend (see the module comment) and the store's secret box. */
export interface BackendAdapter {
  readonly storeBackend: StoreBackend;
  /** Seals and opens the secrets the store keeps (store/secret-box.ts), with the store's key. */
  readonly secretBox: SecretBox;
}

/** The backend of the database (or transaction, or a migration's untyped database) `db`. */
export function storeBackend(db: { getExecutor(): QueryExecutor }): StoreBackend {
  return backendAdapter(db).storeBackend;
}

/**
 * The secret box of the store `db` belongs to: like its backend, the key travels with the
 * database object (a transaction's included), so store functions seal and open at the boundary
 * and services see plaintext only.
 */
export function storeSecrets(db: { getExecutor(): QueryExecutor }): SecretBox {
  return backendAdapter(db).secretBox;
}

function backendAdapter(db: { getExecutor(): QueryExecutor }): BackendAdapter {
  const adapter = db.getExecutor().adapter;
  if (!('storeBackend' in adapter))
    throw new Error('this database was not opened by store/db.ts (its adapter carries no store backend)');
  return adapter as unknown as BackendAdapter;
}

/**
 * Pauses between the transactions of a job that writes a large whole in steps: on SQLite long
 * enough for another writer waiting for the lock to take it (dialect/sqlite-driver.ts,
 * `STEP_PAUSE_MS`); on PostgreSQL, whose writers lock rows, not at all.
 */
export async function pauseBetweenSteps(db: Executor): Promise<void> {
  if (storeBackend(db).name === 'sqlite') await delay(STEP_PAUSE_MS);
}
