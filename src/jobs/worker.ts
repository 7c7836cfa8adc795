/**
 * The batch worker: claims one chunk at a time from the store with a lease (owner, expiry,
 * heartbeat), verifies it, and writes its results in one transaction guarded by the lease, so
 * a chunk's results are written exactly once even when a worker dies and another takes over.
 * `runOnce()` is one deterministic pass for tests; `start()`/`stop()` run the poll loop.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { enqueueJobEvents } from '../services/job-events.js';
import { failJobAndRefund } from '../services/jobs.service.js';
import { ChunkDecodeError, decodeEmails, decodeRepeats, encodeResults } from '../store/chunk-codec.js';
import { storeBackend } from '../store/backend.js';
import { completeChunk, releaseChunk, renewChunkLease, type ChunkRef } from '../store/chunk.store.js';
import type { Executor } from '../store/executor.js';
import { addChunkProgress, completeJobIfDone, getJob, markJobProcessing } from '../store/job.store.js';
import type { ChunkRow } from '../store/schema/jobs.schema.js';
import type { JobMetrics } from './job-metrics.js';
import type { ChunkVerifier } from '../services/chunk-verifier.js';

/**
 * A chunk claimed this many times without finishing (its workers died or lost their lease each
 * time) fails its job instead of being retried forever.
 */
export const MAX_CHUNK_ATTEMPTS = 5;

export interface WorkerDeps {
  db: Executor;
  clock: Clock;
  config: Readonly<Config>;
  logger: Logger;
  verifyChunk: ChunkVerifier;
  /** Told about verified chunks and takeovers (GET /metrics); optional. */
  metrics?: Pick<JobMetrics, 'chunkVerified' | 'chunkTakenOver'>;
}

interface InFlight {
  controller: AbortController;
  done: Promise<void>;
}

export class Worker {
  /** The lease owner id, unique per worker instance (a restarted process is a new owner). */
  readonly id = `wkr_${randomBytes(8).toString('hex')}`;
  readonly #deps: WorkerDeps;
  readonly #inFlight = new Map<string, InFlight>();
  #running = false;
  #stopping = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  /** Set by the store's wake-up (a job queued, a chunk handed back) until the next claiming round. */
  #workSignalled = false;
  #stopWatchingWork: (() => void) | null = null;

  constructor(deps: WorkerDeps) {
    this.#deps = deps;
  }

  /** Claims and processes one chunk; false when there was nothing to do. */
  async runOnce(): Promise<boolean> {
    const chunk = await this.#claim();
    if (!chunk) return false;
    await this.#run(chunk);
    return true;
  }

  /**
   * Starts the poll loop: up to `config.batch.chunkConcurrency` chunks at a time. Between rounds
   * it waits for the poll interval or, sooner, for the store to announce work (StoreBackend
   * onWork): polling is the fallback when no announcement comes.
   */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = false;
    this.#stopWatchingWork = storeBackend(this.#deps.db).onWork(() => {
      this.#workSignalled = true;
      this.#wake?.();
    });
    this.#loop = this.#pollLoop();
  }

  /**
   * Stops claiming, aborts the chunks in flight and gives their leases back (with the attempt),
   * so another worker resumes them at once instead of after the lease expires.
   */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#stopping = true;
    this.#stopWatchingWork?.();
    this.#stopWatchingWork = null;
    for (const f of this.#inFlight.values()) f.controller.abort();
    this.#wake?.();
    await this.#loop;
    await Promise.allSettled([...this.#inFlight.values()].map((f) => f.done));
    this.#loop = null;
  }

  async #pollLoop(): Promise<void> {
    const { config, logger } = this.#deps;
    while (this.#running) {
      let claimed = false;
      // Cleared before claiming: an announcement that arrives during the round is for work the
      // round may not have seen, and cuts the next wait short.
      this.#workSignalled = false;
      try {
        while (this.#running && this.#inFlight.size < config.batch.chunkConcurrency) {
          const chunk = await this.#claim();
          if (!chunk) break;
          if (!this.#running) {
            // stop() came while this claim was on its way: hand it straight back.
            await releaseChunk(this.#deps.db, chunk, this.id);
            break;
          }
          claimed = true;
          this.#spawn(chunk);
        }
      } catch (err) {
        logger.error({ err, worker: this.id }, 'claiming a chunk failed');
      }
      if (!this.#running) break;
      // Full: wait for a slot. Idle: wait for the poll interval or an announcement of work.
      // Either way stop() wakes us.
      await this.#idle(
        claimed && this.#inFlight.size < config.batch.chunkConcurrency ? 0 : config.batch.pollIntervalMs,
      );
    }
  }

  #idle(ms: number): Promise<void> {
    if (this.#workSignalled) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
      for (const f of this.#inFlight.values()) void f.done.then(done);
    });
  }

  #spawn(chunk: ChunkRow): void {
    const key = `${chunk.job_id}/${chunk.seq}`;
    const controller = new AbortController();
    const done = this.#run(chunk, controller)
      .catch((err: unknown) =>
        this.#deps.logger.error({ err, job_id: chunk.job_id, seq: chunk.seq }, 'chunk failed'),
      )
      .finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, { controller, done });
  }

  async #claim(): Promise<ChunkRow | undefined> {
    const { db, clock, config } = this.#deps;
    const now = clock.now();
    const chunk = await storeBackend(db).claimChunk(db, {
      owner: this.id,
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + config.batch.leaseMs).toISOString(),
      inFlight: this.#inFlight,
    });
    // A second claim of a chunk that still has no results: the previous one ended without them.
    if (chunk && chunk.attempts > 1) this.#deps.metrics?.chunkTakenOver();
    return chunk;
  }

  async #run(chunk: ChunkRow, controller = new AbortController()): Promise<void> {
    const { db, clock, logger } = this.#deps;
    const ref: ChunkRef = { job_id: chunk.job_id, seq: chunk.seq };
    const log = logger.child({ job_id: chunk.job_id, seq: chunk.seq, worker: this.id });
    const job = await getJob(db, chunk.job_id);
    if (!job || (job.status !== 'queued' && job.status !== 'processing')) {
      await releaseChunk(db, ref, this.id);
      return;
    }
    if (chunk.attempts > MAX_CHUNK_ATTEMPTS) {
      log.warn({ attempts: chunk.attempts }, 'chunk retried past the limit; failing its job');
      await failJobAndRefund(
        this.#deps,
        job.id,
        `chunk ${chunk.seq} was started ${MAX_CHUNK_ATTEMPTS} times without finishing`,
      );
      return;
    }
    await markJobProcessing(db, job.id, clock.now().toISOString());

    let emails: string[];
    try {
      emails = decodeEmails(chunk.emails, chunk.size);
    } catch (err) {
      if (!(err instanceof ChunkDecodeError)) throw err;
      log.error({ err }, 'chunk data is corrupt; failing its job');
      await failJobAndRefund(this.#deps, job.id, `corrupt data in chunk ${chunk.seq}: ${err.message}`);
      return;
    }

    const stopHeartbeat = this.#heartbeat(ref, controller, log);
    let rows;
    try {
      rows = await this.#deps.verifyChunk(
        { id: job.id, mode: job.mode, accountId: job.account_id },
        emails,
        controller.signal,
        decodeRepeats(chunk.repeats),
      );
    } catch (err) {
      if (controller.signal.aborted) {
        // Stopping: hand the chunk back untouched. Lost lease or cancelled job: nothing to give back.
        if (this.#stopping) await releaseChunk(db, ref, this.id);
        return;
      }
      // Keep the lease (and the attempt): the chunk is retried once the lease expires, which
      // spaces out retries of a failing chunk; MAX_CHUNK_ATTEMPTS ends them.
      throw err;
    } finally {
      stopHeartbeat();
    }

    const counts = {
      size: rows.length,
      valid: rows.filter((r) => r.valid).length,
      invalid: rows.filter((r) => r.status === 'undeliverable').length,
    };
    const results = encodeResults(rows);
    let stored = false;
    await db.transaction().execute(async (trx) => {
      const now = clock.now();
      if (
        !(await completeChunk(trx, ref, this.id, { results, valid: counts.valid, invalid: counts.invalid }))
      ) {
        log.warn('lease lost before the results were written; another worker owns the chunk');
        return;
      }
      if (!(await addChunkProgress(trx, job.id, counts))) return;
      stored = true;
      const completed = await completeJobIfDone(trx, job.id, now.toISOString());
      if (completed) {
        await enqueueJobEvents(trx, completed, this.#deps.config, now);
        log.info({ total: completed.total }, 'job completed');
      }
    });
    if (stored) this.#deps.metrics?.chunkVerified(counts.size);
  }

  /**
   * Renews the lease every third of its length; aborts the chunk when the lease was lost or
   * the job was cancelled meanwhile.
   */
  #heartbeat(ref: ChunkRef, controller: AbortController, log: Logger): () => void {
    const { db, clock, config } = this.#deps;
    const every = Math.max(50, Math.floor(config.batch.leaseMs / 3));
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const expires = new Date(clock.now().getTime() + config.batch.leaseMs).toISOString();
      renewChunkLease(db, ref, this.id, expires)
        .then(async (held) => {
          const job = held ? await getJob(db, ref.job_id) : undefined;
          if (!held || job?.status === 'failed') {
            log.warn({ lease_held: held }, 'abandoning chunk');
            controller.abort();
          }
        })
        .catch((err: unknown) => log.error({ err }, 'lease renewal failed'))
        .finally(() => {
          busy = false;
        });
    }, every);
    return () => clearInterval(timer);
  }
}
