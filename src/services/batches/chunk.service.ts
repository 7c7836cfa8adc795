/**
 * A chunk's life, for the batch worker (jobs/worker.ts): claim it with a lease, begin it (its job
 * still runs, its attempts are within the limit, its data decodes), verify it through the engine,
 * complete it (its results, the job's progress and, for the last chunk, the job's completion and
 * events, in one transaction guarded by the lease), or release it unfinished, or fail its job.
 * Every transaction of a chunk opens here; the worker loop decides only when, and for how long a
 * lease lasts.
 *
 * A lease names its owner in every conditional UPDATE, so a chunk's results are written exactly
 * once even when a worker dies and another takes over.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { storeBackend } from '../../store/backend.js';
import { ChunkDecodeError, decodeEmails, decodeRepeats, encodeResults } from '../../store/chunk-codec.js';
import { completeChunk, releaseChunk, renewChunkLease } from '../../store/chunk.store.js';
import type { Executor } from '../../store/executor.js';
import { addChunkProgress, completeJobIfDone, getJob, markJobProcessing } from '../../store/job.store.js';
import type { ChunkRow } from '../../store/schema/jobs.schema.js';
import type { ChunkJob, ChunkVerifier } from './chunk-verifier.js';
import { enqueueJobEvents } from './job-events.js';
import { failJobAndRefund } from './jobs.service.js';

/**
 * A chunk claimed this many times without finishing (its workers died or lost their lease each
 * time) fails its job instead of being retried forever.
 */
export const MAX_CHUNK_ATTEMPTS = 5;

/** Told about verified chunks and takeovers (jobs/job-metrics.ts on GET /metrics). */
export interface ChunkMetrics {
  chunkVerified(addresses: number): void;
  chunkTakenOver(): void;
}

export interface ChunkServiceDeps {
  db: Executor;
  clock: Clock;
  config: Readonly<Config>;
  logger: Logger;
  verifyChunk: ChunkVerifier;
  metrics?: ChunkMetrics;
}

/** A chunk leased to a worker. */
export type ClaimedChunk = ChunkRow;

/** The chunks a worker is still running, by `chunkKey`: never claimed again by it. */
export interface RunningChunks {
  has(key: string): boolean;
  keys(): Iterable<string>;
}

/** A begun chunk: what its verification needs and what completing it writes. */
export interface BegunChunk {
  readonly chunk: ClaimedChunk;
  readonly job: ChunkJob;
  readonly emails: readonly string[];
  readonly repeats: readonly number[];
  readonly log: Logger;
}

export type VerifiedRows = Awaited<ReturnType<ChunkVerifier>>;

/** Why `begin` left a chunk unverified. */
export type NotBegun = 'released' | 'job-failed';

export interface ChunkService {
  /** Leases one free chunk to `workerId` until `leaseUntil`; undefined when nothing is free. */
  claim: (workerId: string, leaseUntil: Date, running: RunningChunks) => Promise<ClaimedChunk | undefined>;
  /**
   * Readies a claimed chunk for verification, or says why there is nothing to verify: `released`,
   * its job no longer runs and the chunk is handed back; `job-failed`, the job was failed here (too
   * many attempts or corrupt data), which settles the chunk.
   */
  begin: (chunk: ClaimedChunk, workerId: string) => Promise<BegunChunk | NotBegun>;
  /** Verifies a begun chunk through the engine (or test mode); rejects when `signal` aborts. */
  verify: (begun: BegunChunk, signal: AbortSignal) => Promise<VerifiedRows>;
  /**
   * Stores the results while `workerId` holds the lease, with the job's progress and, when it was
   * the last chunk, the job's completion and its events, in one transaction. False when the lease
   * was lost or the job no longer runs (nothing is written).
   */
  complete: (begun: BegunChunk, workerId: string, rows: VerifiedRows) => Promise<boolean>;
  /** Gives the chunk back unfinished, with the attempt it used (clean shutdown). */
  release: (chunk: ClaimedChunk, workerId: string) => Promise<void>;
  /** Extends the lease; false when it was lost or the job was failed meanwhile (stop working on it). */
  renew: (chunk: ClaimedChunk, workerId: string, leaseUntil: Date) => Promise<boolean>;
  /** Calls `listener` when work may be waiting (StoreBackend.onWork); returns what removes it. */
  onWork: (listener: () => void) => () => void;
}

/** The key of a chunk among a worker's running chunks. */
export function chunkKey(chunk: Pick<ClaimedChunk, 'job_id' | 'seq'>): string {
  return `${chunk.job_id}/${chunk.seq}`;
}

const refOf = (chunk: ClaimedChunk) => ({ job_id: chunk.job_id, seq: chunk.seq });

export function createChunkService(deps: ChunkServiceDeps): ChunkService {
  const { db, clock, logger } = deps;
  const backend = storeBackend(db);
  return {
    async claim(workerId, leaseUntil, running) {
      const chunk = await backend.claimChunk(db, {
        owner: workerId,
        now: clock.now().toISOString(),
        expiresAt: leaseUntil.toISOString(),
        inFlight: running,
      });
      // A second claim of a chunk that still has no results: the previous one ended without them.
      if (chunk && chunk.attempts > 1) deps.metrics?.chunkTakenOver();
      return chunk;
    },

    async begin(chunk, workerId) {
      const log = logger.child({ job_id: chunk.job_id, seq: chunk.seq, worker: workerId });
      const job = await getJob(db, chunk.job_id);
      if (!job || (job.status !== 'queued' && job.status !== 'processing')) {
        await releaseChunk(db, refOf(chunk), workerId);
        return 'released';
      }
      if (chunk.attempts > MAX_CHUNK_ATTEMPTS) {
        log.warn({ attempts: chunk.attempts }, 'chunk retried past the limit; failing its job');
        await failJobAndRefund(
          deps,
          job.id,
          `chunk ${chunk.seq} was started ${MAX_CHUNK_ATTEMPTS} times without finishing`,
        );
        return 'job-failed';
      }
      await markJobProcessing(db, job.id, clock.now().toISOString());
      let emails: string[];
      try {
        emails = decodeEmails(chunk.emails, chunk.size);
      } catch (err) {
        if (!(err instanceof ChunkDecodeError)) throw err;
        log.error({ err }, 'chunk data is corrupt; failing its job');
        await failJobAndRefund(deps, job.id, `corrupt data in chunk ${chunk.seq}: ${err.message}`);
        return 'job-failed';
      }
      return {
        chunk,
        job: { id: job.id, mode: job.mode, accountId: job.account_id },
        emails,
        repeats: decodeRepeats(chunk.repeats),
        log,
      };
    },

    verify: (begun, signal) => deps.verifyChunk(begun.job, begun.emails, signal, begun.repeats),

    async complete(begun, workerId, rows) {
      const { chunk, job, log } = begun;
      const counts = {
        size: rows.length,
        valid: rows.filter((r) => r.valid).length,
        invalid: rows.filter((r) => r.status === 'undeliverable').length,
      };
      const results = encodeResults(rows);
      let stored = false;
      await db.transaction().execute(async (trx) => {
        const now = clock.now();
        const done = { results, valid: counts.valid, invalid: counts.invalid };
        if (!(await completeChunk(trx, refOf(chunk), workerId, done))) {
          log.warn('lease lost before the results were written; another worker owns the chunk');
          return;
        }
        if (!(await addChunkProgress(trx, job.id, counts))) return;
        stored = true;
        const completed = await completeJobIfDone(trx, job.id, now.toISOString());
        if (completed) {
          await enqueueJobEvents(trx, completed, deps.config, now);
          log.info({ total: completed.total }, 'job completed');
        }
      });
      if (stored) deps.metrics?.chunkVerified(counts.size);
      return stored;
    },

    release: (chunk, workerId) => releaseChunk(db, refOf(chunk), workerId),

    async renew(chunk, workerId, leaseUntil) {
      const held = await renewChunkLease(db, refOf(chunk), workerId, leaseUntil.toISOString());
      const job = held ? await getJob(db, chunk.job_id) : undefined;
      if (!held || job?.status === 'failed') {
        logger.warn(
          { job_id: chunk.job_id, seq: chunk.seq, worker: workerId, lease_held: held },
          'abandoning chunk',
        );
        return false;
      }
      return true;
    },

    onWork: (listener) => backend.onWork(listener),
  };
}
