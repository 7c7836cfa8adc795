/**
 * The dashboard's view of batch jobs: the list with each job's uploaded file name, one job with
 * its counts by verdict and reason once it has completed (the download is list-download.ts's).
 * Reading, cancelling and the download's checks are jobs.service.ts's, as for the v1 API.
 */
import { STATUSES, type Status } from '../../engine/types.js';
import { AppError } from '../../errors.js';
import { ChunkDecodeError, decodeResults } from '../../store/chunk-codec.js';
import { findAccountById } from '../../store/account.store.js';
import { readChunk } from '../../store/chunk.store.js';
import type { Executor } from '../../store/executor.js';
import { getAccountJob, listAccountJobs } from '../../store/job.store.js';
import {
  findResultCounts,
  findUploadByJob,
  findUploadsByJobs,
  insertResultCounts,
} from '../../store/list-upload.store.js';
import type { ListUploadRow } from '../../store/schema/dashboard.schema.js';
import type { JobMode, JobRow, JobStatus } from '../../store/schema/jobs.schema.js';
import { resultsExpired } from './job-view.js';
import { cancelJob, DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, type JobsDeps } from './jobs.service.js';

/** A job's state as the dashboard shows it: v1's, and `cancelled` (docs/dashboard.md). */
export type DashboardJobState = JobStatus | 'cancelled';

/** A job as the dashboard lists it: the v1 job plus the list's name and the counts so far. */
export interface DashboardJob {
  job_id: string;
  /** The uploaded file's name; null for an API batch. */
  name: string | null;
  status: DashboardJobState;
  mode: JobMode;
  total: number;
  processed: number;
  created_at: string;
  completed_at: string | null;
  results_expire_at: string;
  /** Completed and not past retention. */
  downloadable: boolean;
  /** A download keeps the uploaded file's other columns. */
  has_original_columns: boolean;
  /** Why a queued or processing job waits: its account is suspended (docs/operators.md). */
  paused: 'account_suspended' | null;
}

export interface DashboardJobPage {
  jobs: DashboardJob[];
  next_cursor: string | null;
}

/** Counts by verdict and by reason of a completed job. */
export interface ResultCounts {
  by_status: Record<string, number>;
  by_reason: Record<string, number>;
}

export interface DashboardJobDetail {
  job: DashboardJob;
  counts: ResultCounts | null;
}

export function toJobItem(
  job: JobRow,
  upload: ListUploadRow | undefined,
  now: Date,
  accountSuspended = false,
): DashboardJob {
  const waiting = job.status === 'queued' || job.status === 'processing';
  return {
    job_id: job.id,
    name: upload?.name ?? null,
    // The store keeps a cancelled job as failed with error "cancelled" (docs/jobs.md).
    status: job.status === 'failed' && job.error === 'cancelled' ? 'cancelled' : job.status,
    mode: job.mode,
    total: job.total,
    processed: job.processed,
    created_at: job.created_at,
    completed_at: job.completed_at,
    results_expire_at: job.results_expire_at,
    downloadable: job.status === 'completed' && !resultsExpired(job, now),
    has_original_columns: upload !== undefined,
    paused: accountSuspended && waiting ? 'account_suspended' : null,
  };
}

/** Whether an operator has the account suspended: its queued jobs wait (docs/operators.md). */
async function isSuspended(db: Executor, accountId: string): Promise<boolean> {
  return ((await findAccountById(db, accountId))?.suspended_at ?? null) !== null;
}

async function itemsOf(db: Executor, accountId: string, rows: JobRow[], now: Date): Promise<DashboardJob[]> {
  const uploads = await findUploadsByJobs(
    db,
    rows.map((r) => r.id),
  );
  const suspended = rows.length > 0 && (await isSuspended(db, accountId));
  return rows.map((r) => toJobItem(r, uploads.get(r.id), now, suspended));
}

/** The account's jobs, newest first, a page at a time (the cursor of GET /v1/jobs). */
export async function listJobItems(
  deps: JobsDeps,
  accountId: string,
  cursor?: string,
): Promise<DashboardJobPage> {
  const after = cursor === undefined || cursor === '' ? null : decodeCursor(cursor);
  const rows = await listAccountJobs(deps.db, accountId, DEFAULT_PAGE_SIZE + 1, after);
  const page = rows.slice(0, DEFAULT_PAGE_SIZE);
  const last = page.at(-1);
  return {
    jobs: await itemsOf(deps.db, accountId, page, deps.clock.now()),
    next_cursor:
      rows.length > DEFAULT_PAGE_SIZE && last
        ? encodeCursor({ createdAt: last.created_at, id: last.id })
        : null,
  };
}

export async function latestJobItems(
  deps: JobsDeps,
  accountId: string,
  count: number,
): Promise<DashboardJob[]> {
  const rows = await listAccountJobs(deps.db, accountId, count, null);
  return itemsOf(deps.db, accountId, rows, deps.clock.now());
}

async function requireJob(db: Executor, accountId: string, id: string): Promise<JobRow> {
  const job = await getAccountJob(db, accountId, id);
  if (!job) throw new AppError('not_found', 'no such job');
  return job;
}

/** Tallies a completed job's results chunk by chunk (one chunk in memory at a time). */
async function tally(db: Executor, job: JobRow): Promise<ResultCounts> {
  const byStatus: Record<string, number> = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  const byReason: Record<string, number> = {};
  for (let seq = 0; seq < job.chunk_count; seq++) {
    const chunk = await readChunk(db, job.id, seq);
    if (!chunk || chunk.results === null) throw new ChunkDecodeError(`results of chunk ${seq} are gone`);
    for (const row of decodeResults(chunk.results, chunk.size)) {
      byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
      if (row.reason !== null) byReason[row.reason] = (byReason[row.reason] ?? 0) + 1;
    }
  }
  return { by_status: byStatus, by_reason: byReason };
}

/**
 * Counts by verdict and reason of a completed job: computed from its results the first time
 * they are asked for and kept (`job_result_counts`), so they outlive the results' retention and
 * a polling page does not re-read 500,000 results. Null before completion, or when the results
 * were deleted before anyone asked.
 */
export async function resultCounts(db: Executor, job: JobRow, now: Date): Promise<ResultCounts | null> {
  if (job.status !== 'completed') return null;
  const stored = await findResultCounts(db, job.id);
  if (stored)
    return {
      by_status: JSON.parse(stored.by_status) as Record<string, number>,
      by_reason: JSON.parse(stored.by_reason) as Record<string, number>,
    };
  if (resultsExpired(job, now)) return null;
  let counts: ResultCounts;
  try {
    counts = await tally(db, job);
  } catch (err) {
    // The sweep deleted the results while they were being read.
    if (err instanceof ChunkDecodeError) return null;
    throw err;
  }
  await insertResultCounts(db, job.id, {
    by_status: JSON.stringify(counts.by_status),
    by_reason: JSON.stringify(counts.by_reason),
  });
  return counts;
}

export async function getJobDetail(
  deps: JobsDeps,
  accountId: string,
  id: string,
): Promise<DashboardJobDetail> {
  const job = await requireJob(deps.db, accountId, id);
  const now = deps.clock.now();
  return {
    job: toJobItem(job, await findUploadByJob(deps.db, job.id), now, await isSuspended(deps.db, accountId)),
    counts: await resultCounts(deps.db, job, now),
  };
}

/** The job item of a job just submitted (an uploaded list), with its list's name. */
export async function jobItemOf(deps: JobsDeps, job: JobRow): Promise<DashboardJob> {
  const upload = await findUploadByJob(deps.db, job.id);
  return toJobItem(job, upload, deps.clock.now(), await isSuspended(deps.db, job.account_id));
}

/** Cancels as DELETE /v1/jobs/:id does (unprocessed addresses refunded), answering the job item. */
export async function cancelJobItem(deps: JobsDeps, accountId: string, id: string): Promise<DashboardJob> {
  await cancelJob(deps, accountId, id);
  return jobItemOf(deps, await requireJob(deps.db, accountId, id));
}

/** `deliverable,risky` → the verdicts kept; undefined or empty keeps every row. */
export function parseVerdicts(raw: string | undefined): ReadonlySet<Status> | null {
  if (raw === undefined || raw.trim() === '') return null;
  const kept = new Set<Status>();
  for (const part of raw.split(',')) {
    const v = part.trim();
    if (v === '') continue;
    if (!(STATUSES as readonly string[]).includes(v))
      throw new AppError('invalid_request', `verdicts holds "${v}"; use ${STATUSES.join(', ')}`, {
        field: 'verdicts',
      });
    kept.add(v as Status);
  }
  return kept;
}
