/**
 * The scheduler's tick (docs/dashboard.md, "Re-verification on a schedule"): makes the due runs
 * of scheduled lists and compares each completed run with the list's previous completed run.
 *
 * A due run is claimed with one conditional UPDATE (store/list-schedule.store.ts), so of several
 * processes exactly one makes it; the claim is a lease, released in the submission's own
 * transaction, so a process that dies mid-way leaves the run to another after the lease. A run
 * is a new job of the account built from the schedule's kept copy of the list (addresses and
 * other cells), submitted as an upload is: the quota counts it, and when the remaining quota
 * cannot cover it the run is skipped, recorded, shown on the overview and e-mailed to the
 * members when a relay is configured.
 *
 * The comparison runs once the run's job has completed (the next tick, within the 72-hour
 * retention): row by row against the verdicts the kept copy holds (those of the previous
 * completed run), it keeps the rows that became undeliverable or deliverable (`list_run_changes`,
 * downloadable for as long as the list exists), the run's counts, and the new verdicts as the
 * next baseline. It goes ten parts of the kept copy (chunks of rows) per transaction, pausing
 * between them, so that on SQLite no step holds the writer lock for long whatever the list's
 * size (docs/benchmarks.md, `npm run bench:schedule`); each step is taken by one process only
 * (`compare_step`).
 */
import type { Logger } from 'pino';
import { DAY, MINUTE } from '../../clock.js';
import type { Status } from '../../engine/types.js';
import { AppError, isAppError } from '../../errors.js';
import { ChunkDecodeError, decodeEmails, decodeResults } from '../../store/chunk-codec.js';
import { readChunk } from '../../store/chunk.store.js';
import { getAccountEmail } from '../../store/delivery.store.js';
import { pauseBetweenSteps } from '../../store/backend.js';
import type { Executor } from '../../store/executor.js';
import { getJob } from '../../store/job.store.js';
import {
  claimComparisonStep,
  claimSchedule,
  countScheduleParts,
  findDueSchedules,
  findListUpload,
  findSchedule,
  findUncomparedRuns,
  insertRun,
  insertRunChanges,
  readScheduleRows,
  recordComparison,
  saveComparing,
  setBaseline,
  settleSchedule,
  takeComparison,
  updateScheduleStatuses,
} from '../../store/list-schedule.store.js';
import {
  deleteUpload,
  insertResultCounts,
  insertUpload,
  insertUploadRows,
  linkUpload,
} from '../../store/list-upload.store.js';
import { listAccountMembers } from '../../store/member.store.js';
import type { ListRunRow, ListScheduleRow } from '../../store/schema/list-schedule.schema.js';
import { BatchIntake } from '../batches/batch-intake.js';
import { submitBatch, type SubmitDeps } from '../batches/batch.service.js';
import { randomBase62 } from '../ids.js';
import { resultsExpired } from '../batches/job-view.js';
import type { ScheduleMailer } from './schedule-mail.js';

/** How long a claimed run is held before another process may take it (a run is stored in seconds). */
export const RUN_LEASE_MS = 10 * MINUTE;
/** Due schedules and uncompared runs handled per tick, at most. */
const PER_TICK = 20;
/** Changed rows per stored part. */
const CHANGES_PER_PART = 1000;
/** Parts of the kept copy (chunks of rows) compared per transaction: 10,000 rows by default. */
const PARTS_PER_STEP = 10;

export interface ListRunDeps extends SubmitDeps {
  logger?: Logger;
  mailer?: ScheduleMailer | null;
}

export interface TickReport {
  runs: number;
  skipped: number;
  compared: number;
}

/** One row of the kept copy. */
interface KeptPart {
  seq: number;
  emails: string[];
  cells: string[][];
  statuses: Status[];
}

async function readKept(db: Executor, listId: string, seq: number): Promise<KeptPart | undefined> {
  const row = await readScheduleRows(db, listId, seq);
  if (!row) return undefined;
  return {
    seq,
    emails: JSON.parse(row.emails) as string[],
    cells: JSON.parse(row.cells) as string[][],
    statuses: JSON.parse(row.statuses) as Status[],
  };
}

/** The time of the run after this one: a period on, or a period from now when that has passed too. */
export function followingRun(
  schedule: Pick<ListScheduleRow, 'next_run_at' | 'every_days'>,
  now: Date,
): string {
  const period = schedule.every_days * DAY;
  const next = new Date(schedule.next_run_at).getTime() + period;
  return new Date(next > now.getTime() ? next : now.getTime() + period).toISOString();
}

/** One tick: the due runs, then the comparisons of completed runs. */
export async function runScheduledLists(deps: ListRunDeps): Promise<TickReport> {
  const report: TickReport = { runs: 0, skipped: 0, compared: 0 };
  const now = deps.clock.now();
  for (const listId of await findDueSchedules(deps.db, now.toISOString(), PER_TICK)) {
    const lease = new Date(now.getTime() + RUN_LEASE_MS).toISOString();
    const schedule = await claimSchedule(deps.db, listId, now.toISOString(), lease);
    if (!schedule) continue;
    try {
      const made = await makeRun(deps, schedule, lease);
      if (made) report.runs++;
      else report.skipped++;
    } catch (err) {
      // The claim stays until its lease ends: another tick tries again then.
      deps.logger?.error({ err, listId }, 'scheduled list run failed');
    }
  }
  for (const run of await findUncomparedRuns(deps.db, PER_TICK)) {
    try {
      if (await compareRun(deps, run)) report.compared++;
    } catch (err) {
      deps.logger?.error({ err, runId: run.id }, 'comparing a scheduled run failed');
    }
  }
  return report;
}

/** Submits the claimed run; false when it was skipped for quota. */
async function makeRun(deps: ListRunDeps, schedule: ListScheduleRow, lease: string): Promise<boolean> {
  const { db } = deps;
  const list = await findListUpload(db, schedule.list_id);
  const first = list?.job_id ? await getJob(db, list.job_id) : undefined;
  if (!list || !first) throw new AppError('internal_error', 'the list of a schedule is gone');
  const now = deps.clock.now();
  const chunkSize = deps.config.batch.chunkSize;
  const uploadId = `upl_${randomBase62(20)}`;
  await insertUpload(db, { ...list, id: uploadId, job_id: null, created_at: now.toISOString() });
  const intake = new BatchIntake(chunkSize, { trackRepeats: first.mode === 'live' });
  const runId = `run_${randomBase62(20)}`;
  const next = followingRun(schedule, now);
  try {
    // The kept copy's parts need not match today's chunk size: the cells are cut again.
    let pending: string[][] = [];
    let seq = 0;
    const parts = await countScheduleParts(db, schedule.list_id);
    for (let p = 0; p < parts; p++) {
      const part = await readKept(db, schedule.list_id, p);
      if (!part) throw new AppError('internal_error', 'a part of the kept copy is missing');
      for (let i = 0; i < part.emails.length; i++) {
        intake.add(part.emails[i]!);
        pending.push(part.cells[i]!);
        if (pending.length === chunkSize) {
          await insertUploadRows(db, {
            upload_id: uploadId,
            seq: seq++,
            job_id: null,
            cells: JSON.stringify(pending),
          });
          pending = [];
        }
      }
    }
    if (pending.length > 0)
      await insertUploadRows(db, {
        upload_id: uploadId,
        seq: seq++,
        job_id: null,
        cells: JSON.stringify(pending),
      });
    const addresses = intake.finish();
    const total = addresses.total;
    try {
      await submitBatch(deps, {
        accountId: schedule.account_id,
        mode: first.mode,
        request: { addresses, webhookUrl: null, notifyEmail: true },
        idempotencyKey: null,
        onStored: async (trx, jobId) => {
          await linkUpload(trx, uploadId, jobId);
          await insertRun(trx, {
            id: runId,
            list_id: schedule.list_id,
            job_id: jobId,
            outcome: 'submitted',
            total,
            created_at: now.toISOString(),
          });
          if (
            !(await settleSchedule(trx, schedule.list_id, lease, {
              next_run_at: next,
              skipped_at: null,
              skipped_need: null,
            }))
          )
            throw new AppError('internal_error', 'the claim on this scheduled run was lost');
        },
      });
      return true;
    } catch (err) {
      if (!isAppError(err) || err.code !== 'quota_exceeded') throw err;
      await deleteUpload(db, uploadId);
      await db.transaction().execute(async (trx) => {
        await insertRun(trx, {
          id: runId,
          list_id: schedule.list_id,
          job_id: null,
          outcome: 'skipped_quota',
          total,
          created_at: now.toISOString(),
        });
        if (
          !(await settleSchedule(trx, schedule.list_id, lease, {
            next_run_at: next,
            skipped_at: now.toISOString(),
            skipped_need: total,
          }))
        )
          throw new AppError('internal_error', 'the claim on this scheduled run was lost');
      });
      await tellSkipped(deps, schedule.account_id, { name: list.name, jobId: first.id, need: total, next });
      return false;
    }
  } catch (err) {
    intake.discard();
    await deleteUpload(db, uploadId).catch(() => undefined);
    throw err;
  }
}

async function tellSkipped(
  deps: ListRunDeps,
  accountId: string,
  run: { name: string; jobId: string; need: number; next: string },
): Promise<void> {
  if (!deps.mailer) return;
  const members = (await listAccountMembers(deps.db, accountId)).filter((m) => m.joined_at !== null);
  const to = members.length > 0 ? members.map((m) => m.email) : [await getAccountEmail(deps.db, accountId)];
  const recipients = to.filter((e): e is string => e !== undefined);
  if (recipients.length === 0) return;
  try {
    await deps.mailer.sendSkipped(recipients, {
      listName: run.name,
      link: `${deps.config.publicBaseUrl.replace(/\/$/, '')}/lists/${run.jobId}`,
      need: run.need,
      nextRunAt: run.next,
    });
  } catch (err) {
    // The overview's notice stays: the skip is recorded whether the relay took the message or not.
    deps.logger?.warn({ err, accountId }, 'the relay refused the skipped-run e-mail');
  }
}

const NO_COMPARISON = { compared_with: null, became_undeliverable: null, became_deliverable: null };

/**
 * Compares a completed run with the kept verdicts, `PARTS_PER_STEP` parts of the kept copy per
 * transaction (a step); false when another process did it. Each step first moves the run's
 * `compare_step` on from the value this process last saw: of two processes comparing the same
 * run, only one commits each step, and the other stops at its first refused step. A process that
 * dies between steps leaves the progress (`comparing`) for the next tick to go on from.
 */
async function compareRun(deps: ListRunDeps, run: ListRunRow): Promise<boolean> {
  const now = deps.clock.now();
  const job = run.job_id === null ? undefined : await getJob(deps.db, run.job_id);
  const schedule = await findSchedule(deps.db, run.list_id);
  // Results gone (the workers were down past retention) or the schedule stopped (no kept verdicts):
  // the run stays in the history, without changes (parts already compared keep the run's verdicts
  // as their baseline: each row's latest known verdict).
  if (!job || !schedule || resultsExpired(job, now)) return noComparison(deps, run, now);
  let progress: Progress =
    run.comparing === null ? startOfComparison() : (JSON.parse(run.comparing) as Progress);
  let step = run.compare_step;
  const results = new ResultCursor(job.id, job.chunk_count);
  try {
    for (;;) {
      const outcome = await deps.db.transaction().execute(async (trx) => {
        if (!(await claimComparisonStep(trx, run.id, step))) return 'lost' as const;
        let next = progress;
        for (let parts = 0; parts < PARTS_PER_STEP; parts++) {
          const kept = await readKept(trx, run.list_id, next.kept);
          if (!kept) break;
          next = await comparePart(trx, run.list_id, job.id, kept, next, results);
        }
        if (next !== progress) {
          await saveComparing(trx, run.id, JSON.stringify(next));
          return next;
        }
        if (!(await results.endsAt(trx, progress)))
          throw new AppError('internal_error', 'the kept copy is shorter than the run');
        if (!(await takeComparison(trx, run.id, now.toISOString()))) return 'lost' as const;
        const { counts } = progress;
        await recordComparison(trx, run.id, {
          compared_with: schedule.baseline_job,
          became_undeliverable: counts.becameUndeliverable,
          became_deliverable: counts.becameDeliverable,
        });
        await setBaseline(trx, run.list_id, job.id);
        await insertResultCounts(trx, job.id, {
          by_status: JSON.stringify(counts.byStatus),
          by_reason: JSON.stringify(counts.byReason),
        });
        return 'done' as const;
      });
      if (outcome === 'lost') return false;
      if (outcome === 'done') return true;
      // Committed: the next step goes on from here, once a writer waiting meanwhile had its turn.
      progress = outcome;
      step += 1;
      await pauseBetweenSteps(deps.db);
    }
  } catch (err) {
    if (!(err instanceof ChunkDecodeError)) throw err;
    // The sweep deleted the results while they were read.
    return noComparison(deps, run, now);
  }
}

/** Records the run as not compared (its results or its kept verdicts are gone). */
function noComparison(deps: ListRunDeps, run: ListRunRow, now: Date): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    if (!(await takeComparison(trx, run.id, now.toISOString()))) return false;
    await recordComparison(trx, run.id, NO_COMPARISON);
    return true;
  });
}

/** A row of `list_run_changes`: address, other cells, previous verdict, verdict, reason. */
export type ChangedRow = [string, string[], Status, Status, string | null];

interface Comparison {
  becameUndeliverable: number;
  becameDeliverable: number;
  byStatus: Record<string, number>;
  byReason: Record<string, number>;
}

/** A comparison's progress between its steps (`list_runs.comparing`). */
interface Progress {
  /** The next part of the kept copy. */
  kept: number;
  /** Where the run's results go on: chunk, and row within it. */
  chunk: number;
  row: number;
  /** Parts of `list_run_changes` written so far. */
  changeParts: number;
  counts: Comparison;
}

function startOfComparison(): Progress {
  return {
    kept: 0,
    chunk: 0,
    row: 0,
    changeParts: 0,
    counts: {
      becameUndeliverable: 0,
      becameDeliverable: 0,
      byStatus: { deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 },
      byReason: {},
    },
  };
}

/** A chunk of the run, decoded: its addresses and their results. */
interface DecodedChunk {
  emails: string[];
  results: ReturnType<typeof decodeResults>;
}

/** The run's results chunk by chunk, the last one read kept decoded between steps. */
class ResultCursor {
  #seq = -1;
  #chunk: DecodedChunk | null = null;

  constructor(
    private readonly jobId: string,
    private readonly chunkCount: number,
  ) {}

  /** Chunk `seq`, decoded; null past the last. */
  async read(db: Executor, seq: number): Promise<DecodedChunk | null> {
    if (seq >= this.chunkCount) return null;
    if (seq !== this.#seq) {
      const chunk = await readChunk(db, this.jobId, seq);
      if (!chunk || chunk.results === null) throw new ChunkDecodeError(`results of chunk ${seq} are gone`);
      this.#chunk = {
        emails: decodeEmails(chunk.emails, chunk.size),
        results: decodeResults(chunk.results, chunk.size),
      };
      this.#seq = seq;
    }
    return this.#chunk;
  }

  /** Whether every result was compared once the cursor is at `at`. */
  async endsAt(db: Executor, at: Pick<Progress, 'chunk' | 'row'>): Promise<boolean> {
    for (let seq = at.chunk, row = at.row; ; seq++, row = 0) {
      const chunk = await this.read(db, seq);
      if (chunk === null) return true;
      if (row < chunk.results.length) return false;
    }
  }
}

/**
 * The kept part `kept` against the run's rows from `from`'s cursor on. Writes the part's new
 * verdicts and its changed rows; returns the progress after it (counts added).
 */
async function comparePart(
  trx: Executor,
  listId: string,
  jobId: string,
  kept: KeptPart,
  from: Progress,
  results: ResultCursor,
): Promise<Progress> {
  const counts = structuredClone(from.counts);
  let { chunk: seq, row, changeParts } = from;
  let changes: ChangedRow[] = [];
  const flushChanges = async (): Promise<void> => {
    if (changes.length === 0) return;
    await insertRunChanges(trx, jobId, changeParts++, JSON.stringify(changes));
    changes = [];
  };
  let chunk = await results.read(trx, seq);
  for (let at = 0; at < kept.emails.length; at++, row++) {
    while (chunk !== null && row >= chunk.results.length) {
      chunk = await results.read(trx, ++seq);
      row = 0;
    }
    if (chunk === null) throw new AppError('internal_error', 'the run is shorter than the kept copy');
    const r = chunk.results[row]!;
    if (kept.emails[at] !== chunk.emails[row])
      throw new AppError('internal_error', 'the run does not follow the kept copy');
    const previous = kept.statuses[at]!;
    counts.byStatus[r.status] = (counts.byStatus[r.status] ?? 0) + 1;
    if (r.reason !== null) counts.byReason[r.reason] = (counts.byReason[r.reason] ?? 0) + 1;
    const became = previous !== r.status && (r.status === 'undeliverable' || r.status === 'deliverable');
    if (became) {
      if (r.status === 'undeliverable') counts.becameUndeliverable++;
      else counts.becameDeliverable++;
      changes.push([kept.emails[at]!, kept.cells[at]!, previous, r.status, r.reason]);
      if (changes.length === CHANGES_PER_PART) await flushChanges();
    }
    kept.statuses[at] = r.status;
  }
  await updateScheduleStatuses(trx, listId, kept.seq, JSON.stringify(kept.statuses));
  await flushChanges();
  return { kept: kept.seq + 1, chunk: seq, row, changeParts, counts };
}
