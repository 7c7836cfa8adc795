/**
 * Idempotency keys, scoped to the account. The primary key (account_id, key) is the guard:
 * of two submissions racing with one key, exactly one insert succeeds.
 */
import type { Executor as Db } from './executor.js';
import type { IdempotencyKeysTable } from './schema/jobs.schema.js';

/** One stored key: exactly the table's row. */
export type IdempotencyRecord = IdempotencyKeysTable;

/** Inserts the key unless the account already holds it; true when this call inserted it. */
export async function insertIdempotencyKey(db: Db, record: IdempotencyRecord): Promise<boolean> {
  const res = await db
    .insertInto('idempotency_keys')
    .values(record)
    .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function getIdempotencyKey(
  db: Db,
  accountId: string,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Takes over an expired key for a new submission; false when the key is not (or no longer) expired. */
export async function replaceExpiredIdempotencyKey(db: Db, record: IdempotencyRecord): Promise<boolean> {
  const res = await db
    .updateTable('idempotency_keys')
    .set({
      body_hash: record.body_hash,
      job_id: record.job_id,
      created_at: record.created_at,
      expires_at: record.expires_at,
    })
    .where('account_id', '=', record.account_id)
    .where('key', '=', record.key)
    .where('expires_at', '<=', record.created_at)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

export async function deleteExpiredIdempotencyKeys(db: Db, now: string): Promise<number> {
  const res = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}
