/**
 * A list's schedule and history as the dashboard shows them (docs/dashboard.md, "Re-verification
 * on a schedule"). A list is its first upload; a job of the list is that upload's job or one of
 * its runs, and each answers for the whole list. Setting a schedule keeps a copy of the list
 * (addresses, other cells, verdicts) taken from its latest completed job while that job's results
 * are still kept; the copy lives as long as the schedule does. The runs are list-runs.service.ts's.
 */
import { DAY, MINUTE } from '../../clock.js';
import type { Status } from '../../engine/types.js';
import { AppError } from '../../errors.js';
import { decodeEmails, decodeResults } from '../../store/chunk-codec.js';
import { readChunk } from '../../store/chunk.store.js';
import { pauseBetweenSteps } from '../../store/backend.js';
import type { Executor } from '../../store/executor.js';
import { getAccountJob, getJob } from '../../store/job.store.js';
import {
  deleteSchedule,
  deleteScheduleRowsFrom,
  findListUpload,
  findRunByJob,
  findSchedule,
  findSkippedSchedules,
  finishScheduleCopy,
  insertScheduleRows,
  insertSchedule,
  latestCompletedListJob,
  listRuns,
  readRunChanges,
  updateSchedule,
} from '../../store/list-schedule.store.js';
import { findUploadByJob, insertResultCounts, readUploadCells } from '../../store/list-upload.store.js';
import type { JobRow } from '../../store/schema/jobs.schema.js';
import type { ListRunRow } from '../../store/schema/list-schedule.schema.js';
import { csvRows } from '../csv-export.js';
import { resultCounts, toJobItem, type DashboardJobState } from '../batches/job-list.service.js';
import { resultsExpired } from '../batches/job-view.js';
import type { JobsDeps } from '../batches/jobs.service.js';
import { ownColumns, type Download } from './list-download.js';
import type { ChangedRow } from './list-runs.service.js';

/** Longest period, in days. */
export const MAX_EVERY_DAYS = 365;
/** How long a request making a kept copy holds it before another may start it again. */
const COPY_LEASE_MS = 10 * MINUTE;
/** Parts of the kept copy (chunks of rows) written per transaction: 10,000 rows by default. */
const COPY_PARTS_PER_STEP = 10;
/** Runs shown in a list's history, newest first. */
const HISTORY_LENGTH = 100;

export interface ScheduleView {
  every_days: number;
  next_run_at: string;
}

export interface HistoryEntry {
  /** Null for a run skipped for quota. */
  job_id: string | null;
  kind: 'upload' | 'run' | 'skipped';
  created_at: string;
  status: DashboardJobState | null;
  total: number;
  counts: Record<string, number> | null;
  /** Null until the run is compared with the previous one, and for the upload. */
  changes: { became_undeliverable: number; became_deliverable: number; compared_with: string | null } | null;
}

async function requireJob(db: Executor, accountId: string, id: string): Promise<JobRow> {
  const job = await getAccountJob(db, accountId, id);
  if (!job) throw new AppError('not_found', 'no such job');
  return job;
}

/** The list a job belongs to (its first upload's id); null for an API batch. */
async function listOf(db: Executor, job: JobRow): Promise<string | null> {
  const run = await findRunByJob(db, job.id);
  if (run) return run.list_id;
  return (await findUploadByJob(db, job.id))?.id ?? null;
}

/** The schedule of the job's list, or null. 404 for a job that is not the account's. */
export async function scheduleOfJob(
  deps: JobsDeps,
  accountId: string,
  jobId: string,
): Promise<ScheduleView | null> {
  const listId = await listOf(deps.db, await requireJob(deps.db, accountId, jobId));
  const schedule = listId === null ? undefined : await findSchedule(deps.db, listId);
  return schedule ? { every_days: schedule.every_days, next_run_at: schedule.next_run_at } : null;
}

/**
 * Puts the job's list on a schedule of `everyDays` days (the first run that many days from now),
 * changes its period, or stops it (null: the kept copy is deleted, the history stays). 422 for
 * an API batch or a period outside 1..365; 409 `job_not_ready` before the list has been
 * verified once; 410 `results_expired` when its latest results are past retention (nothing left
 * to keep a copy of: upload it again).
 */
export async function setSchedule(
  deps: JobsDeps,
  accountId: string,
  jobId: string,
  everyDays: number | null,
): Promise<ScheduleView | null> {
  const job = await requireJob(deps.db, accountId, jobId);
  const listId = await listOf(deps.db, job);
  if (listId === null)
    throw new AppError(
      'invalid_request',
      'only a list uploaded from the dashboard can be re-verified on a schedule',
    );
  if (everyDays === null) {
    await deleteSchedule(deps.db, listId);
    return null;
  }
  if (!Number.isInteger(everyDays) || everyDays < 1 || everyDays > MAX_EVERY_DAYS)
    throw new AppError(
      'invalid_request',
      `every_days must be a whole number from 1 to ${MAX_EVERY_DAYS}, or null`,
      {
        field: 'every_days',
      },
    );
  const now = deps.clock.now();
  const view = {
    every_days: everyDays,
    next_run_at: new Date(now.getTime() + everyDays * DAY).toISOString(),
  };
  const existing = await findSchedule(deps.db, listId);
  // A copy left half-made by a request that died (its lease is over) is made again.
  if (existing?.copying_until != null && existing.copying_until <= now.toISOString())
    await deleteSchedule(deps.db, listId);
  else if (existing) {
    await updateSchedule(deps.db, listId, view);
    return view;
  }
  const sourceId = await latestCompletedListJob(deps.db, listId);
  const source = sourceId === undefined ? undefined : await getJob(deps.db, sourceId);
  if (!source)
    throw new AppError('job_not_ready', 'the list can be put on a schedule once it has been verified');
  if (resultsExpired(source, now))
    throw new AppError(
      'results_expired',
      'the list’s latest results are past retention, so there is no copy of it to keep: upload it again',
    );
  const inserted = await insertSchedule(deps.db, {
    list_id: listId,
    account_id: accountId,
    ...view,
    claimed_until: null,
    baseline_job: source.id,
    skipped_at: null,
    skipped_need: null,
    created_at: now.toISOString(),
    copying_until: new Date(now.getTime() + COPY_LEASE_MS).toISOString(),
  });
  if (!inserted) {
    // A concurrent request is making the copy: this one only sets the period.
    await updateSchedule(deps.db, listId, view);
    return view;
  }
  try {
    await copyList(deps.db, listId, source);
  } catch (err) {
    await deleteSchedule(deps.db, listId).catch(() => undefined);
    throw err;
  }
  return view;
}

/**
 * Copies the source job's rows into the kept copy, `COPY_PARTS_PER_STEP` parts per transaction
 * with a pause between them, so that SQLite's writer lock is never held long
 * (docs/benchmarks.md, `npm run bench:schedule`), then marks the copy whole in the last one. The source's counts are
 * kept too: the history shows them after its results are gone.
 */
async function copyList(db: Executor, listId: string, source: JobRow): Promise<void> {
  const byStatus: Record<string, number> = { deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 };
  const byReason: Record<string, number> = {};
  for (let seq = 0; seq < source.chunk_count;) {
    if (seq > 0) await pauseBetweenSteps(db);
    await db.transaction().execute(async (trx) => {
      for (const end = Math.min(seq + COPY_PARTS_PER_STEP, source.chunk_count); seq < end; seq++) {
        const chunk = await readChunk(trx, source.id, seq);
        const cells = await readUploadCells(trx, source.id, seq);
        if (!chunk || chunk.results === null || cells === undefined)
          throw new AppError(
            'results_expired',
            'the list’s latest results were deleted meanwhile: upload it again',
          );
        const results = decodeResults(chunk.results, chunk.size);
        for (const r of results) {
          byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
          if (r.reason !== null) byReason[r.reason] = (byReason[r.reason] ?? 0) + 1;
        }
        await insertScheduleRows(trx, {
          list_id: listId,
          seq,
          emails: JSON.stringify(decodeEmails(chunk.emails, chunk.size)),
          cells,
          statuses: JSON.stringify(results.map((r) => r.status)),
        });
      }
    });
  }
  await db.transaction().execute(async (trx) => {
    await deleteScheduleRowsFrom(trx, listId, source.chunk_count);
    await insertResultCounts(trx, source.id, {
      by_status: JSON.stringify(byStatus),
      by_reason: JSON.stringify(byReason),
    });
    await finishScheduleCopy(trx, listId);
  });
}

async function entryOfJob(
  deps: JobsDeps,
  job: JobRow | undefined,
  kind: 'upload' | 'run',
  run: ListRunRow | null,
  now: Date,
): Promise<HistoryEntry | null> {
  if (!job) return null;
  const counts = await resultCounts(deps.db, job, now);
  return {
    job_id: job.id,
    kind,
    created_at: job.created_at,
    status: toJobItem(job, undefined, now).status,
    total: job.total,
    counts: counts?.by_status ?? null,
    changes:
      run?.became_undeliverable == null || run.became_deliverable == null
        ? null
        : {
            became_undeliverable: run.became_undeliverable,
            became_deliverable: run.became_deliverable,
            compared_with: run.compared_with,
          },
  };
}

/** The list's runs (the newest 100) and its upload, newest first. [] for an API batch. */
export async function listHistory(deps: JobsDeps, accountId: string, jobId: string): Promise<HistoryEntry[]> {
  const listId = await listOf(deps.db, await requireJob(deps.db, accountId, jobId));
  if (listId === null) return [];
  const now = deps.clock.now();
  const entries: HistoryEntry[] = [];
  for (const run of await listRuns(deps.db, listId, HISTORY_LENGTH)) {
    if (run.job_id === null) {
      entries.push({
        job_id: null,
        kind: 'skipped',
        created_at: run.created_at,
        status: null,
        total: run.total,
        counts: null,
        changes: null,
      });
      continue;
    }
    const entry = await entryOfJob(deps, await getJob(deps.db, run.job_id), 'run', run, now);
    if (entry) entries.push(entry);
  }
  const list = await findListUpload(deps.db, listId);
  const first = await entryOfJob(
    deps,
    list?.job_id ? await getJob(deps.db, list.job_id) : undefined,
    'upload',
    null,
    now,
  );
  if (first) entries.push(first);
  return entries;
}

/**
 * The rows of a run that became undeliverable or deliverable since the previous run, as CSV: the
 * file's own columns, then `previous_status`, `status`, `reason`. Kept for as long as the list
 * (not only the 72 hours of the results). 404 for a job that is not a compared run.
 */
export async function openChanges(deps: JobsDeps, accountId: string, jobId: string): Promise<Download> {
  const job = await requireJob(deps.db, accountId, jobId);
  const run = await findRunByJob(deps.db, job.id);
  if (!run || run.became_deliverable === null)
    throw new AppError('not_found', 'this job is not a scheduled run whose changes are known yet');
  const upload = await findUploadByJob(deps.db, job.id);
  const { names, emailAt } = ownColumns(upload);
  const base = (upload?.name ?? job.id)
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .slice(0, 100);
  async function* body(): AsyncGenerator<string> {
    yield csvRows([[...names, 'previous_status', 'status', 'reason']]);
    for (let part = 0; ; part++) {
      const text = await readRunChanges(deps.db, job.id, part);
      if (text === undefined) return;
      const rows = (JSON.parse(text) as ChangedRow[]).map(([email, cells, previous, status, reason]) => {
        const own: (string | number)[] = [...cells];
        own.splice(emailAt, 0, email);
        while (own.length < names.length) own.push('');
        return [...own, previous, status satisfies Status, reason ?? ''];
      });
      yield csvRows(rows);
    }
  }
  return {
    filename: `${base || job.id}-changes.csv`,
    contentType: 'text/csv; charset=utf-8',
    body: body(),
  };
}

/** A list whose last scheduled run was skipped for quota (the overview's notice). */
export interface ScheduleNotice {
  job_id: string;
  name: string;
  skipped_at: string;
  need: number;
  next_run_at: string;
}

/** The account's lists whose last scheduled run was skipped for quota, latest first. */
export async function scheduleNotices(db: Executor, accountId: string): Promise<ScheduleNotice[]> {
  const notices: ScheduleNotice[] = [];
  for (const s of await findSkippedSchedules(db, accountId)) {
    const list = await findListUpload(db, s.list_id);
    if (!list?.job_id || s.skipped_at === null) continue;
    notices.push({
      job_id: list.job_id,
      name: list.name,
      skipped_at: s.skipped_at,
      need: s.skipped_need ?? 0,
      next_run_at: s.next_run_at,
    });
  }
  return notices;
}
