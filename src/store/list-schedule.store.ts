/**
 * SQL for lists re-verified on a schedule: the schedule and its claim, the kept copy of the list,
 * the runs and the rows that changed in each.
 */
import type { Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { ListUploadRow } from './schema/dashboard.schema.js';
import type {
  ListRunRow,
  ListRunsTable,
  ListScheduleRow,
  ListScheduleRowsTable,
  ListSchedulesTable,
} from './schema/list-schedule.schema.js';

export async function findSchedule(db: Executor, listId: string): Promise<ListScheduleRow | undefined> {
  return db.selectFrom('list_schedules').selectAll().where('list_id', '=', listId).executeTakeFirst();
}

/** Inserts the schedule unless the list has one already (a concurrent request's); true when inserted. */
export async function insertSchedule(db: Executor, row: Insertable<ListSchedulesTable>): Promise<boolean> {
  const res = await db
    .insertInto('list_schedules')
    .values(row)
    .onConflict((oc) => oc.column('list_id').doNothing())
    .executeTakeFirst();
  return (res.numInsertedOrUpdatedRows ?? 0n) === 1n;
}

/** The kept copy is whole: the schedule may run. */
export async function finishScheduleCopy(db: Executor, listId: string): Promise<void> {
  await db.updateTable('list_schedules').set({ copying_until: null }).where('list_id', '=', listId).execute();
}

/** Drops parts of the kept copy from `seq` on (left by an earlier copy of another length). */
export async function deleteScheduleRowsFrom(db: Executor, listId: string, seq: number): Promise<void> {
  await db.deleteFrom('list_schedule_rows').where('list_id', '=', listId).where('seq', '>=', seq).execute();
}

/** A new period for an existing schedule (the kept copy stays). */
export async function updateSchedule(
  db: Executor,
  listId: string,
  period: { every_days: number; next_run_at: string },
): Promise<void> {
  await db.updateTable('list_schedules').set(period).where('list_id', '=', listId).execute();
}

/** Stops the schedule and drops its kept copy; the runs stay in the list's history. */
export async function deleteSchedule(db: Executor, listId: string): Promise<void> {
  await db.deleteFrom('list_schedule_rows').where('list_id', '=', listId).execute();
  await db.deleteFrom('list_schedules').where('list_id', '=', listId).execute();
}

/** Schedules due at `now` that no live claim holds, oldest first. */
/**
 * Lists whose run is due. A suspended account's lists wait (docs/operators.md): they are not due
 * until an operator resumes the account, and then run at once.
 */
export async function findDueSchedules(db: Executor, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('list_schedules')
    .innerJoin('accounts', 'accounts.id', 'list_schedules.account_id')
    .select('list_schedules.list_id')
    .where('accounts.suspended_at', 'is', null)
    .where('copying_until', 'is', null)
    .where('next_run_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
    .orderBy('next_run_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.list_id);
}

/**
 * Claims the due run of a schedule until `leaseUntil`: one conditional UPDATE, so of several
 * processes racing for the same run exactly one sees its row changed (SQLite takes the write lock
 * for it; PostgreSQL re-checks the WHERE on the locked row). Answers the schedule when this
 * caller won it.
 */
export async function claimSchedule(
  db: Executor,
  listId: string,
  now: string,
  leaseUntil: string,
): Promise<ListScheduleRow | undefined> {
  const res = await db
    .updateTable('list_schedules')
    .set({ claimed_until: leaseUntil })
    .where('list_id', '=', listId)
    .where('copying_until', 'is', null)
    .where('next_run_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
    .executeTakeFirst();
  if (res.numUpdatedRows !== 1n) return undefined;
  return findSchedule(db, listId);
}

/** After a comparison: the kept copy's verdicts are now those of `jobId`. */
export async function setBaseline(db: Executor, listId: string, jobId: string): Promise<void> {
  await db.updateTable('list_schedules').set({ baseline_job: jobId }).where('list_id', '=', listId).execute();
}

/** The list's first upload (the list itself). */
export async function findListUpload(db: Executor, listId: string): Promise<ListUploadRow | undefined> {
  return db.selectFrom('list_uploads').selectAll().where('id', '=', listId).executeTakeFirst();
}

/**
 * Settles a claimed run: the next one's time, the claim released, the skip noted or cleared.
 * False when the claim is no longer this caller's (its lease ran out and another process took
 * the run, or the schedule was stopped): the caller then rolls its run back.
 */
export async function settleSchedule(
  db: Executor,
  listId: string,
  lease: string,
  settled: { next_run_at: string; skipped_at: string | null; skipped_need: number | null },
): Promise<boolean> {
  const res = await db
    .updateTable('list_schedules')
    .set({ ...settled, claimed_until: null })
    .where('list_id', '=', listId)
    .where('claimed_until', '=', lease)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** The account's schedules whose last run was skipped for quota (the overview's notices). */
export async function findSkippedSchedules(db: Executor, accountId: string): Promise<ListScheduleRow[]> {
  return db
    .selectFrom('list_schedules')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('skipped_at', 'is not', null)
    .orderBy('skipped_at', 'desc')
    .execute();
}

export async function insertScheduleRows(db: Executor, row: ListScheduleRowsTable): Promise<void> {
  await db.insertInto('list_schedule_rows').values(row).execute();
}

export async function countScheduleParts(db: Executor, listId: string): Promise<number> {
  const row = await db
    .selectFrom('list_schedule_rows')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('list_id', '=', listId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One part of the kept copy, read alone so a run holds one part at a time. */
export async function readScheduleRows(
  db: Executor,
  listId: string,
  seq: number,
): Promise<ListScheduleRowsTable | undefined> {
  return db
    .selectFrom('list_schedule_rows')
    .selectAll()
    .where('list_id', '=', listId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

export async function updateScheduleStatuses(
  db: Executor,
  listId: string,
  seq: number,
  statuses: string,
): Promise<void> {
  await db
    .updateTable('list_schedule_rows')
    .set({ statuses })
    .where('list_id', '=', listId)
    .where('seq', '=', seq)
    .execute();
}

export async function insertRun(db: Executor, row: Insertable<ListRunsTable>): Promise<void> {
  await db.insertInto('list_runs').values(row).execute();
}

export async function findRunByJob(db: Executor, jobId: string): Promise<ListRunRow | undefined> {
  return db.selectFrom('list_runs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

/** The list's runs and skipped runs, newest first. */
export async function listRuns(db: Executor, listId: string, limit: number): Promise<ListRunRow[]> {
  return db
    .selectFrom('list_runs')
    .selectAll()
    .where('list_id', '=', listId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Runs whose job has completed and that have not been compared yet. */
export async function findUncomparedRuns(db: Executor, limit: number): Promise<ListRunRow[]> {
  return db
    .selectFrom('list_runs')
    .innerJoin('jobs', 'jobs.id', 'list_runs.job_id')
    .selectAll('list_runs')
    .where('list_runs.compared_at', 'is', null)
    .where('jobs.status', '=', 'completed')
    .orderBy('list_runs.created_at')
    .limit(limit)
    .execute();
}

/**
 * Takes the comparison of a run (inside the transaction that writes it): of two processes only
 * one changes the row; the other's UPDATE waits for the first to commit and then matches nothing.
 */
export async function takeComparison(db: Executor, runId: string, now: string): Promise<boolean> {
  const res = await db
    .updateTable('list_runs')
    .set({ compared_at: now })
    .where('id', '=', runId)
    .where('compared_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/**
 * Takes step `step` of a run's comparison (inside the transaction that writes it): moves
 * `compare_step` on from `step`. Of two processes only one changes the row; the other's UPDATE
 * waits for the first to commit and then matches nothing.
 */
export async function claimComparisonStep(db: Executor, runId: string, step: number): Promise<boolean> {
  const res = await db
    .updateTable('list_runs')
    .set({ compare_step: step + 1 })
    .where('id', '=', runId)
    .where('compare_step', '=', step)
    .where('compared_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

export async function saveComparing(db: Executor, runId: string, comparing: string): Promise<void> {
  await db.updateTable('list_runs').set({ comparing }).where('id', '=', runId).execute();
}

export async function recordComparison(
  db: Executor,
  runId: string,
  result: {
    compared_with: string | null;
    became_undeliverable: number | null;
    became_deliverable: number | null;
  },
): Promise<void> {
  await db.updateTable('list_runs').set(result).where('id', '=', runId).execute();
}

export async function insertRunChanges(
  db: Executor,
  jobId: string,
  part: number,
  rows: string,
): Promise<void> {
  await db.insertInto('list_run_changes').values({ job_id: jobId, part, rows }).execute();
}

export async function readRunChanges(db: Executor, jobId: string, part: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('list_run_changes')
    .select('rows')
    .where('job_id', '=', jobId)
    .where('part', '=', part)
    .executeTakeFirst();
  return row?.rows;
}

/** The latest job of the list that completed (the source of a new schedule's kept copy). */
export async function latestCompletedListJob(db: Executor, listId: string): Promise<string | undefined> {
  const run = await db
    .selectFrom('list_runs')
    .innerJoin('jobs', 'jobs.id', 'list_runs.job_id')
    .select('jobs.id')
    .where('list_runs.list_id', '=', listId)
    .where('jobs.status', '=', 'completed')
    .orderBy('list_runs.created_at', 'desc')
    .executeTakeFirst();
  if (run) return run.id;
  const first = await db
    .selectFrom('list_uploads')
    .innerJoin('jobs', 'jobs.id', 'list_uploads.job_id')
    .select('jobs.id')
    .where('list_uploads.id', '=', listId)
    .where('jobs.status', '=', 'completed')
    .executeTakeFirst();
  return first?.id;
}
