/**
 * Reading and managing an account's batch jobs: the job object, the list, cancellation and the
 * results download (streamed chunk by chunk). Unknown ids and other accounts' jobs are the same
 * `not_found`. See docs/jobs.md.
 */
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { decodeEmails, decodeResults, type ResultRow } from '../../store/chunk-codec.js';
import { readChunk } from '../../store/chunk.store.js';
import type { Executor } from '../../store/executor.js';
import { failJob, getAccountJob, listAccountJobs, type JobPageCursor } from '../../store/job.store.js';
import type { JobRow } from '../../store/schema/jobs.schema.js';
import { enqueueJobEvents } from './job-events.js';
import { resultsExpired, toJobView, type JobView } from './job-view.js';
import { refundQuota } from '../usage/usage.service.js';
import type { UsageCache } from '../usage/usage-cache.js';

export interface JobsDeps {
  db: Executor;
  clock: Clock;
  config: Readonly<Config>;
  /** Emptied for the account when this process counts or refunds (services/usage/usage-cache.ts). */
  usageCache?: UsageCache;
}

async function requireJob(db: Executor, accountId: string, id: string): Promise<JobRow> {
  const job = await getAccountJob(db, accountId, id);
  if (!job) throw new AppError('not_found', 'no such job');
  return job;
}

export async function getJobView(deps: JobsDeps, accountId: string, id: string): Promise<JobView> {
  const job = await requireJob(deps.db, accountId, id);
  return toJobView(job, deps.config.publicBaseUrl, deps.clock.now());
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface JobPage {
  jobs: JobView[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  next_cursor: string | null;
}

export function encodeCursor(c: JobPageCursor): string {
  return Buffer.from(`${c.createdAt}|${c.id}`).toString('base64url');
}

export function decodeCursor(raw: string): JobPageCursor {
  const [createdAt, id, extra] = Buffer.from(raw, 'base64url').toString().split('|');
  if (createdAt === undefined || id === undefined || extra !== undefined || !id.startsWith('job_')) {
    throw new AppError('invalid_request', 'cursor is not one this service returned');
  }
  return { createdAt, id };
}

/** The account's jobs, newest first, `limit` at a time (keyset pagination: stable while jobs are added). */
export async function listJobs(
  deps: JobsDeps,
  accountId: string,
  page: { limit?: number; cursor?: string },
): Promise<JobPage> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new AppError('invalid_request', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor);
  // One extra row tells whether another page follows.
  const rows = await listAccountJobs(deps.db, accountId, limit + 1, after);
  const now = deps.clock.now();
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return {
    jobs: pageRows.map((r) => toJobView(r, deps.config.publicBaseUrl, now)),
    next_cursor:
      rows.length > limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}

/**
 * Ends a queued or processing job as failed with the given reason, gives back the quota of
 * the addresses it did not process, and queues its job.failed webhook: one transaction.
 * Undefined when the job had already finished.
 */
export async function failJobAndRefund(
  deps: JobsDeps,
  jobId: string,
  reason: string,
  accountId?: string,
): Promise<JobRow | undefined> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const job = await failJob(trx, jobId, reason, now.toISOString(), accountId);
    if (!job) return undefined;
    if (job.mode === 'live' && job.quota_period_start !== null) {
      await refundQuota(trx, {
        accountId: job.account_id,
        count: job.total - job.processed,
        periodStart: job.quota_period_start,
        usageCache: deps.usageCache,
        countedAt: job.created_at,
      });
    }
    await enqueueJobEvents(trx, job, deps.config, now);
    return job;
  });
}

/**
 * Cancels a queued or processing job: it becomes `failed` with error `cancelled`; addresses
 * not yet processed are refunded, processed ones stay counted. 409 `job_not_cancellable` once
 * it has completed or failed.
 */
export async function cancelJob(deps: JobsDeps, accountId: string, id: string): Promise<JobView> {
  const job = await requireJob(deps.db, accountId, id);
  const cancelled = await failJobAndRefund(deps, job.id, 'cancelled', accountId);
  if (!cancelled) {
    throw new AppError(
      'job_not_cancellable',
      `the job has already ${job.status === 'failed' ? 'failed' : 'completed'}`,
    );
  }
  return toJobView(cancelled, deps.config.publicBaseUrl, deps.clock.now());
}

/** One stored chunk of a completed job's results, decoded: its addresses and their results. */
export interface ResultChunk {
  seq: number;
  /** Index of the chunk's first address in the submission. */
  startIndex: number;
  emails: string[];
  rows: ResultRow[];
}

export interface JobResults {
  job: JobRow;
  /** The results one chunk at a time, in submission order; nothing is read until it is iterated. */
  chunks: AsyncGenerator<ResultChunk>;
}

/**
 * The one reader of a job's results, for v1's download and the dashboard's: checks that they can
 * be read (404, 409 `job_not_ready`, 410 `results_expired`) and reads one chunk at a time, so
 * memory does not grow with the job's size. The edge writes them in its format.
 */
export async function openResults(deps: JobsDeps, accountId: string, id: string): Promise<JobResults> {
  const job = await requireJob(deps.db, accountId, id);
  if (job.status !== 'completed') {
    throw new AppError(
      'job_not_ready',
      job.status === 'failed'
        ? `the job failed (${job.error ?? 'unknown'}) and has no results`
        : `the job is ${job.status}; results are available once it has completed`,
    );
  }
  if (resultsExpired(job, deps.clock.now())) {
    throw new AppError(
      'results_expired',
      `results were kept until ${job.results_expire_at} and have been deleted`,
    );
  }
  return { job, chunks: chunksOf(deps.db, job) };
}

async function* chunksOf(db: Executor, job: JobRow): AsyncGenerator<ResultChunk> {
  for (let seq = 0; seq < job.chunk_count; seq++) {
    const chunk = await readChunk(db, job.id, seq);
    // Deleted by the sweep while the download was running: end the response with an error.
    if (!chunk || chunk.results === null) throw new Error(`results of chunk ${seq} of ${job.id} are gone`);
    yield {
      seq,
      startIndex: chunk.start_index,
      emails: decodeEmails(chunk.emails, chunk.size),
      rows: decodeResults(chunk.results, chunk.size),
    };
  }
}
