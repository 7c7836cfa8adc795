/**
 * Chunks of a job's addresses and results, and the leases workers hold on them. A lease is
 * taken, renewed and released only by conditional UPDATEs that name the owner, so a worker that
 * lost its lease (it stalled, or died and came back) can no longer write.
 */
import type { Insertable } from 'kysely';
import type { Executor as Db } from './executor.js';
import type { ChunkRow, JobChunksTable } from './schema/jobs.schema.js';

/** Rows per INSERT statement: 8 columns a row stays far below SQLite's bound-parameter limit. */
const INSERT_BATCH = 100;
/**
 * And at most about this many characters of addresses a statement: a 100-chunk statement of
 * 254-character addresses (25 MB) held the event loop for about 150 ms (p99 of concurrent
 * requests in `npm run bench:isolation`); 2 MB statements keep each well under 20 ms.
 */
const INSERT_BYTES = 2_000_000;

/** Inserts `rows` in statements of that size, taking each row only when its statement is built. */
export async function insertChunks(db: Db, rows: Iterable<Insertable<JobChunksTable>>): Promise<void> {
  let batch: Insertable<JobChunksTable>[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    await db.insertInto('job_chunks').values(batch).execute();
    batch = [];
    bytes = 0;
    // SQLite statements run on the event loop: let other requests in between two statements.
    await new Promise((resolve) => setImmediate(resolve));
  };
  for (const row of rows) {
    batch.push(row);
    bytes += row.emails.length;
    if (batch.length >= INSERT_BATCH || bytes >= INSERT_BYTES) await flush();
  }
  if (batch.length > 0) await flush();
}

export interface ChunkRef {
  job_id: string;
  seq: number;
}

/**
 * Pending chunks free to claim (never leased, or lease expired). The job with the fewest done
 * chunks goes first, then the oldest: jobs share the workers instead of a 500,000-address job
 * holding them all until it ends. A suspended account's jobs wait (docs/operators.md).
 */
export async function findClaimableChunks(db: Db, now: string, limit: number): Promise<ChunkRef[]> {
  return db
    .selectFrom('job_chunks')
    .innerJoin('jobs', 'jobs.id', 'job_chunks.job_id')
    .innerJoin('accounts', 'accounts.id', 'jobs.account_id')
    .select(['job_chunks.job_id', 'job_chunks.seq'])
    .where('job_chunks.state', '=', 'pending')
    .where('jobs.status', 'in', ['queued', 'processing'])
    .where('accounts.suspended_at', 'is', null)
    .where((eb) =>
      eb.or([eb('job_chunks.lease_owner', 'is', null), eb('job_chunks.lease_expires_at', '<', now)]),
    )
    .orderBy('jobs.chunks_done')
    .orderBy('jobs.created_at')
    .orderBy('job_chunks.job_id')
    .orderBy('job_chunks.seq')
    .limit(limit)
    .execute();
}

/** Takes the lease when the chunk is still free; returns the claimed row (attempts counted) or undefined. */
export async function claimChunk(
  db: Db,
  ref: ChunkRef,
  owner: string,
  now: string,
  expiresAt: string,
): Promise<ChunkRow | undefined> {
  return db
    .updateTable('job_chunks')
    .set((eb) => ({ lease_owner: owner, lease_expires_at: expiresAt, attempts: eb('attempts', '+', 1) }))
    .where('job_id', '=', ref.job_id)
    .where('seq', '=', ref.seq)
    .where('state', '=', 'pending')
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<', now)]))
    .returningAll()
    .executeTakeFirst();
}

/** Extends the lease; false when the owner no longer holds it. */
export async function renewChunkLease(
  db: Db,
  ref: ChunkRef,
  owner: string,
  expiresAt: string,
): Promise<boolean> {
  const res = await db
    .updateTable('job_chunks')
    .set({ lease_expires_at: expiresAt })
    .where('job_id', '=', ref.job_id)
    .where('seq', '=', ref.seq)
    .where('state', '=', 'pending')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** Gives the chunk back unfinished (clean shutdown), with the attempt it used. */
export async function releaseChunk(db: Db, ref: ChunkRef, owner: string): Promise<void> {
  await db
    .updateTable('job_chunks')
    .set((eb) => ({ lease_owner: null, lease_expires_at: null, attempts: eb('attempts', '-', 1) }))
    .where('job_id', '=', ref.job_id)
    .where('seq', '=', ref.seq)
    .where('state', '=', 'pending')
    .where('lease_owner', '=', owner)
    .execute();
}

/**
 * Stores the chunk's results and marks it done, only while `owner` holds the lease and the chunk
 * is still pending: true for exactly one writer, so results are written once.
 */
export async function completeChunk(
  db: Db,
  ref: ChunkRef,
  owner: string,
  done: { results: string; valid: number; invalid: number },
): Promise<boolean> {
  const res = await db
    .updateTable('job_chunks')
    .set({
      state: 'done',
      results: done.results,
      valid_count: done.valid,
      invalid_count: done.invalid,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('job_id', '=', ref.job_id)
    .where('seq', '=', ref.seq)
    .where('state', '=', 'pending')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

export interface StoredChunk {
  seq: number;
  start_index: number;
  size: number;
  emails: string;
  results: string | null;
}

/** One chunk's stored data, read alone so that a download holds one chunk in memory at a time. */
export async function readChunk(db: Db, jobId: string, seq: number): Promise<StoredChunk | undefined> {
  return db
    .selectFrom('job_chunks')
    .select(['seq', 'start_index', 'size', 'emails', 'results'])
    .where('job_id', '=', jobId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

export async function deleteJobChunks(db: Db, jobId: string): Promise<number> {
  const res = await db.deleteFrom('job_chunks').where('job_id', '=', jobId).executeTakeFirst();
  return Number(res.numDeletedRows);
}
