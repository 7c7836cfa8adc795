/**
 * The retention sweep: deletes the chunks (addresses and results) of jobs whose retention has
 * passed and keeps the job row, so the results endpoint answers 410 rather than 404; and
 * deletes expired idempotency keys, the security log's entries past `auditRetentionMs`, delivery
 * outcomes and the verdict log past `outcomeRetentionMs`, and the
 * rows of worker processes not seen for WORKER_ROWS_KEPT_MS.
 * Idempotent; safe to run from several processes.
 */
import { DAY, type Clock } from '../../clock.js';
import { deleteJobChunks } from '../../store/chunk.store.js';
import type { Executor } from '../../store/executor.js';
import { deleteExpiredIdempotencyKeys } from '../../store/idempotency.store.js';
import { findExpiredJobIds, markResultsDeleted } from '../../store/job.store.js';
import { deleteOutcomesBefore } from '../../store/outcome.store.js';
import { deleteStaleWorkers } from '../../store/worker.store.js';
import { deleteVerdictsBefore } from '../../store/verdict-log.store.js';
import { pruneAudit } from '../accounts/audit.service.js';

export interface SweepReport {
  jobs: number;
  chunks: number;
  idempotencyKeys: number;
  auditEntries: number;
  /** Delivery outcomes that happened more than `outcomeRetentionMs` ago. */
  outcomeEvents: number;
  /** Verdicts of the verdict log last given more than `outcomeRetentionMs` ago. */
  verdicts: number;
  /** Rows of workers stopped or lost more than WORKER_ROWS_KEPT_MS ago. */
  workers: number;
}

/** How long the console still counts a worker that stopped or went silent (docs/operators.md). */
export const WORKER_ROWS_KEPT_MS = DAY;

/** The default of `--audit-retention` (src/config.ts), for callers without a config. */
export const DEFAULT_AUDIT_RETENTION_MS = 365 * DAY;

/** The default of `--outcome-retention` (src/config.ts), for callers without a config. */
export const DEFAULT_OUTCOME_RETENTION_MS = 730 * DAY;

export interface SweepDeps {
  db: Executor;
  clock: Clock;
  /** Default DEFAULT_AUDIT_RETENTION_MS. */
  auditRetentionMs?: number;
  /** Default DEFAULT_OUTCOME_RETENTION_MS. */
  outcomeRetentionMs?: number;
}

/** Jobs handled per transaction: keeps each write short so the API is never blocked long. */
const JOBS_PER_PASS = 20;

/** One full sweep of what has expired by `clock.now()`. */
export async function sweepExpired(deps: SweepDeps): Promise<SweepReport> {
  const { db, clock } = deps;
  const now = clock.now().toISOString();
  const report: SweepReport = {
    jobs: 0,
    chunks: 0,
    idempotencyKeys: 0,
    auditEntries: 0,
    outcomeEvents: 0,
    verdicts: 0,
    workers: 0,
  };
  for (;;) {
    const ids = await findExpiredJobIds(db, now, JOBS_PER_PASS);
    if (ids.length === 0) break;
    await db.transaction().execute(async (trx) => {
      for (const id of ids) {
        report.chunks += await deleteJobChunks(trx, id);
        await markResultsDeleted(trx, id, now);
      }
    });
    report.jobs += ids.length;
  }
  report.idempotencyKeys = await deleteExpiredIdempotencyKeys(db, now);
  report.auditEntries = await pruneAudit(db, clock, deps.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS);
  const outcomesBefore = new Date(
    clock.now().getTime() - (deps.outcomeRetentionMs ?? DEFAULT_OUTCOME_RETENTION_MS),
  ).toISOString();
  report.outcomeEvents = await deleteOutcomesBefore(db, outcomesBefore);
  report.verdicts = await deleteVerdictsBefore(db, outcomesBefore);
  report.workers = await deleteStaleWorkers(
    db,
    new Date(clock.now().getTime() - WORKER_ROWS_KEPT_MS).toISOString(),
  );
  return report;
}
