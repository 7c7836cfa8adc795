/**
 * Jobs: one row per batch submission. Every state change is a conditional UPDATE on the current
 * status, so two processes racing on the same job (a worker completing it, a user cancelling
 * it) cannot both win. Functions take the database or a transaction.
 */
import type { Insertable } from 'kysely';
import type { Executor as Db } from './executor.js';
import type { JobRow, JobsTable } from './schema/jobs.schema.js';

export async function insertJob(db: Db, row: Insertable<JobsTable>): Promise<void> {
  await db.insertInto('jobs').values(row).execute();
}

/** Records the billing period a live job was counted in (for refunds). */
export async function setJobQuotaPeriod(db: Db, id: string, periodStart: string): Promise<void> {
  await db.updateTable('jobs').set({ quota_period_start: periodStart }).where('id', '=', id).execute();
}

export async function getJob(db: Db, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The job when it belongs to the account; undefined for an unknown id and for another account's job alike. */
export async function getAccountJob(db: Db, accountId: string, id: string): Promise<JobRow | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export interface JobPageCursor {
  createdAt: string;
  id: string;
}

/** The account's jobs, newest first; `after` continues from the last row of the previous page. */
export async function listAccountJobs(
  db: Db,
  accountId: string,
  limit: number,
  after: JobPageCursor | null,
): Promise<JobRow[]> {
  let q = db.selectFrom('jobs').selectAll().where('account_id', '=', accountId);
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** queued → processing, when a worker claims the job's first chunk. */
export async function markJobProcessing(db: Db, id: string, now: string): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ status: 'processing', started_at: now })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .execute();
}

/** Adds a finished chunk's counts; only while the job is running (a cancelled job stops counting). */
export async function addChunkProgress(
  db: Db,
  id: string,
  counts: { size: number; valid: number; invalid: number },
): Promise<boolean> {
  const res = await db
    .updateTable('jobs')
    .set((eb) => ({
      processed: eb('processed', '+', counts.size),
      valid_count: eb('valid_count', '+', counts.valid),
      invalid_count: eb('invalid_count', '+', counts.invalid),
      chunks_done: eb('chunks_done', '+', 1),
    }))
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** processing → completed once every chunk is done; returns the completed job to the one caller that completed it. */
export async function completeJobIfDone(db: Db, id: string, now: string): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ status: 'completed', completed_at: now })
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .whereRef('chunks_done', '=', 'chunk_count')
    .returningAll()
    .executeTakeFirst();
}

/** queued/processing → failed with a reason; undefined when the job had already finished. */
export async function failJob(
  db: Db,
  id: string,
  error: string,
  now: string,
  accountId?: string,
): Promise<JobRow | undefined> {
  let q = db
    .updateTable('jobs')
    .set({ status: 'failed', error, failed_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'processing']);
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  return q.returningAll().executeTakeFirst();
}

/** Jobs whose retention has passed and whose chunks are still stored. */
export async function findExpiredJobIds(db: Db, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('jobs')
    .select('id')
    .where('results_expire_at', '<=', now)
    .where('results_deleted_at', 'is', null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function markResultsDeleted(db: Db, id: string, now: string): Promise<void> {
  await db.updateTable('jobs').set({ results_deleted_at: now }).where('id', '=', id).execute();
}
