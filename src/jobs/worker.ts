/**
 * The batch worker loop, in graphile-worker's shape: it is given its worker id, a clock and the
 * steps of a chunk's life (claim, begin, verify, complete, release, renew: services/
 * chunk.service.ts owns them and every transaction they open) and decides only when each runs.
 * It holds up to `concurrency` chunks, renews their leases while they are verified, and hands
 * them back on stop(). `runOnce()` is one deterministic pass for tests; `start()`/`stop()` run
 * the poll loop. `createWorker` wires it to the store for `serve`, `mailverdict worker` and tests.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import {
  chunkKey,
  createChunkService,
  type ChunkService,
  type ChunkServiceDeps,
  type ClaimedChunk,
} from '../services/batches/chunk.service.js';

export interface WorkerOptions extends Pick<
  ChunkService,
  'claim' | 'begin' | 'verify' | 'complete' | 'release' | 'renew'
> {
  /** The lease owner id, unique per worker instance (a restarted process is a new owner). */
  workerId: string;
  clock: Clock;
  logger: Logger;
  /** Chunks run at the same time by start(). */
  concurrency: number;
  /** The wait between two claiming rounds when no announcement of work comes. */
  pollIntervalMs: number;
  /** How long a lease lasts; renewed every third of it while a chunk is verified. */
  leaseMs: number;
  /** Announcements of work (a job queued, a chunk handed back) that cut the poll wait short. */
  onWork?: ChunkService['onWork'];
}

interface InFlight {
  controller: AbortController;
  done: Promise<void>;
}

/** A fresh lease owner id. */
export function newWorkerId(): string {
  return `wkr_${randomBytes(8).toString('hex')}`;
}

export class Worker {
  readonly id: string;
  readonly #options: WorkerOptions;
  readonly #inFlight = new Map<string, InFlight>();
  #running = false;
  #stopping = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  /** Set by the store's wake-up (a job queued, a chunk handed back) until the next claiming round. */
  #workSignalled = false;
  #stopWatchingWork: (() => void) | null = null;
  #chunksDone = 0;

  constructor(options: WorkerOptions) {
    this.#options = options;
    this.id = options.workerId;
  }

  /**
   * The chunks this worker finished since it was made: completed with its results, or settled by
   * failing their job. Not those handed back, nor those whose lease it lost.
   */
  get chunksDone(): number {
    return this.#chunksDone;
  }

  /** Claims and processes one chunk; false when there was nothing to do. */
  async runOnce(): Promise<boolean> {
    const chunk = await this.#claim();
    if (!chunk) return false;
    await this.#run(chunk);
    return true;
  }

  /**
   * Starts the poll loop: up to `concurrency` chunks at a time. Between rounds it waits for the
   * poll interval or, sooner, for an announcement of work (`onWork`): polling is the fallback
   * when no announcement comes.
   */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = false;
    this.#stopWatchingWork =
      this.#options.onWork?.(() => {
        this.#workSignalled = true;
        this.#wake?.();
      }) ?? null;
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
    const { concurrency, pollIntervalMs, logger } = this.#options;
    while (this.#running) {
      let claimed = false;
      // Cleared before claiming: an announcement that arrives during the round is for work the
      // round may not have seen, and cuts the next wait short.
      this.#workSignalled = false;
      try {
        while (this.#running && this.#inFlight.size < concurrency) {
          const chunk = await this.#claim();
          if (!chunk) break;
          if (!this.#running) {
            // stop() came while this claim was on its way: hand it straight back.
            await this.#options.release(chunk, this.id);
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
      await this.#idle(claimed && this.#inFlight.size < concurrency ? 0 : pollIntervalMs);
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

  #spawn(chunk: ClaimedChunk): void {
    const key = chunkKey(chunk);
    const controller = new AbortController();
    const done = this.#run(chunk, controller)
      .catch((err: unknown) =>
        this.#options.logger.error({ err, job_id: chunk.job_id, seq: chunk.seq }, 'chunk failed'),
      )
      .finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, { controller, done });
  }

  #leaseUntil(): Date {
    return new Date(this.#options.clock.now().getTime() + this.#options.leaseMs);
  }

  #claim(): Promise<ClaimedChunk | undefined> {
    return this.#options.claim(this.id, this.#leaseUntil(), this.#inFlight);
  }

  async #run(chunk: ClaimedChunk, controller = new AbortController()): Promise<void> {
    const { begin, verify, complete, release } = this.#options;
    const begun = await begin(chunk, this.id);
    if (begun === 'job-failed') this.#chunksDone++;
    if (typeof begun === 'string') return;
    const stopHeartbeat = this.#heartbeat(chunk, controller);
    let rows;
    try {
      rows = await verify(begun, controller.signal);
    } catch (err) {
      if (controller.signal.aborted) {
        // Stopping: hand the chunk back untouched. Lost lease or cancelled job: nothing to give back.
        if (this.#stopping) await release(chunk, this.id);
        return;
      }
      // Keep the lease (and the attempt): the chunk is retried once the lease expires, which
      // spaces out retries of a failing chunk; MAX_CHUNK_ATTEMPTS ends them.
      throw err;
    } finally {
      stopHeartbeat();
    }
    if (await complete(begun, this.id, rows)) this.#chunksDone++;
  }

  /**
   * Renews the lease every third of its length; aborts the chunk when the lease was lost or
   * the job was cancelled meanwhile.
   */
  #heartbeat(chunk: ClaimedChunk, controller: AbortController): () => void {
    const { leaseMs, renew, logger } = this.#options;
    const every = Math.max(50, Math.floor(leaseMs / 3));
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      renew(chunk, this.id, this.#leaseUntil())
        .then((held) => {
          if (!held) controller.abort();
        })
        .catch((err: unknown) =>
          logger.error(
            { err, job_id: chunk.job_id, seq: chunk.seq, worker: this.id },
            'lease renewal failed',
          ),
        )
        .finally(() => {
          busy = false;
        });
    }, every);
    return () => clearInterval(timer);
  }
}

export interface WorkerDeps extends ChunkServiceDeps {
  /** Default: a fresh id (newWorkerId). */
  workerId?: string;
}

/**
 * The worker of `serve`, `mailverdict worker` and the tests: the loop over the chunk service on
 * `deps.db`, with the batch settings of `deps.config` (chunkConcurrency, pollIntervalMs, leaseMs).
 */
export function createWorker(deps: WorkerDeps): Worker {
  const chunks = createChunkService(deps);
  const { batch } = deps.config;
  return new Worker({
    workerId: deps.workerId ?? newWorkerId(),
    clock: deps.clock,
    logger: deps.logger,
    concurrency: batch.chunkConcurrency,
    pollIntervalMs: batch.pollIntervalMs,
    leaseMs: batch.leaseMs,
    claim: chunks.claim,
    begin: chunks.begin,
    verify: chunks.verify,
    complete: chunks.complete,
    release: chunks.release,
    renew: chunks.renew,
    onWork: chunks.onWork,
  });
}
