/**
 * SQL for the lists uploaded through the dashboard: the upload (name, header, where the address
 * is) and, per job chunk, the other cells of its rows; and the verdict counts of a finished job.
 */
import type { Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { ListUploadRow, ListUploadRowsTable, ListUploadsTable } from './schema/dashboard.schema.js';

export async function insertUpload(db: Executor, row: Insertable<ListUploadsTable>): Promise<void> {
  await db.insertInto('list_uploads').values(row).execute();
}

export async function insertUploadRows(db: Executor, row: Insertable<ListUploadRowsTable>): Promise<void> {
  await db.insertInto('list_upload_rows').values(row).execute();
}

/** What the file turned out to hold, known once it has been read to its end. */
export async function finishUpload(
  db: Executor,
  id: string,
  shape: { header: string | null; column_count: number },
): Promise<void> {
  await db.updateTable('list_uploads').set(shape).where('id', '=', id).execute();
}

/**
 * Ties the upload and its rows to the job (and each row to its chunk, which must exist: the
 * submission's transaction calls this after storing the chunks).
 */
export async function linkUpload(db: Executor, id: string, jobId: string): Promise<void> {
  await db.updateTable('list_uploads').set({ job_id: jobId }).where('id', '=', id).execute();
  await db.updateTable('list_upload_rows').set({ job_id: jobId }).where('upload_id', '=', id).execute();
}

/** Deletes an upload and its rows (a refused or abandoned upload). */
export async function deleteUpload(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('list_upload_rows').where('upload_id', '=', id).execute();
  await db.deleteFrom('list_uploads').where('id', '=', id).execute();
}

/** Uploads never tied to a job that started before `before` (their process died mid-way). */
export async function findStaleUploads(db: Executor, before: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('list_uploads')
    .select('id')
    .where('job_id', 'is', null)
    .where('created_at', '<', before)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function findUploadByJob(db: Executor, jobId: string): Promise<ListUploadRow | undefined> {
  return db.selectFrom('list_uploads').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

/** The uploads of these jobs, by job id (a page of the jobs list). */
export async function findUploadsByJobs(
  db: Executor,
  jobIds: readonly string[],
): Promise<Map<string, ListUploadRow>> {
  if (jobIds.length === 0) return new Map();
  const rows = await db.selectFrom('list_uploads').selectAll().where('job_id', 'in', jobIds).execute();
  return new Map(rows.map((r) => [r.job_id!, r]));
}

/** The other cells of one chunk's rows (JSON), read alone so a download holds one chunk at a time. */
export async function readUploadCells(db: Executor, jobId: string, seq: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('list_upload_rows')
    .select('cells')
    .where('job_id', '=', jobId)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row?.cells;
}

export interface StoredResultCounts {
  by_status: string;
  by_reason: string;
}

export async function findResultCounts(db: Executor, jobId: string): Promise<StoredResultCounts | undefined> {
  return db
    .selectFrom('job_result_counts')
    .select(['by_status', 'by_reason'])
    .where('job_id', '=', jobId)
    .executeTakeFirst();
}

/** Keeps a completed job's counts; a second process computing them at the same time changes nothing. */
export async function insertResultCounts(
  db: Executor,
  jobId: string,
  counts: StoredResultCounts,
): Promise<void> {
  await db
    .insertInto('job_result_counts')
    .values({ job_id: jobId, ...counts })
    .onConflict((oc) => oc.column('job_id').doNothing())
    .execute();
}
