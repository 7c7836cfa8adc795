import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * What store functions take: the database or a transaction (Kysely's `Transaction` is a
 * `Kysely`), so that callers open transactions at the edge.
 */
export type Executor = Kysely<Database>;

/**
 * Runs `fn` in the caller's transaction, or in one of its own when `db` is not one: a use case
 * that writes more than one thing (a change and its security-log entry) is all or nothing.
 */
export function inTransaction<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
