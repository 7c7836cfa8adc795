/**
 * The background work of a process: the chunk worker (createWorker), the delivery runner (webhooks
 * and e-mails) and the retention sweeper (createSweeper), on one batch engine. `serve` starts it when `config.batch.embeddedWorkers`;
 * `mailverdict worker` runs it alone. Several processes may run it on one store: every step
 * claims its work with a lease or a conditional UPDATE. Their batch engines share the per-MX-host
 * session cap and back-off, and their chunk verifiers a job's repeated addresses, only through
 * Redis; without it each process applies its own.
 */
import { batchEngineOptions } from '../config.js';
import type { AppContext } from '../context.js';
import { createBatchEngine } from '../engine/batch/batch-engine.js';
import type { BatchEngine } from '../engine/batch/types.js';
import type { EngineCoordination } from '../engine/coordination.js';
import type { EgressGate } from '../engine/egress/egress.js';
import { systemResolver, type HostResolver } from '../services/webhooks/ssrf.js';
import { createChunkVerifier } from '../services/batches/chunk-verifier.js';
import { accountLookup } from '../services/outcomes/account-data.js';
import { DeliveryRunner } from './delivery-runner.js';
import type { JobMetrics } from './job-metrics.js';
import { createMailNotifier } from './notify.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import { createSweeper, type Sweeper } from './sweep.js';
import { createWorker, type Worker } from './worker.js';
import { startWorkerPresence } from './worker-presence.js';
import type { WorkerKind } from '../store/schema/worker.schema.js';
import { SECOND, MINUTE } from '../clock.js';

export interface BackgroundJobs {
  worker: Worker;
  deliveries: DeliveryRunner;
  sweeper: Sweeper;
  /** Scheduled re-verification of lists (jobs/scheduler.ts). */
  scheduler: Scheduler;
  /** Stops claiming, hands unfinished chunks back, waits for in-flight deliveries, closes the engine. */
  stop(): Promise<void>;
}

export interface BackgroundOptions {
  /** Default: a batch engine built from the config (live jobs). */
  batchEngine?: BatchEngine;
  resolveHost?: HostResolver;
  /** Job metrics on the process's /metrics registry (serve); absent for a standalone worker. */
  metrics?: JobMetrics;
  /**
   * The process's shared coordination (`Runtime.coordination`, Redis): the batch engine then takes
   * its per-host session slots and back-off from it, shared with every worker on it. Null or
   * absent: its own.
   */
  coordination?: EngineCoordination | null;
  /**
   * Other processes may verify from the same store (a standalone worker; serve on a database
   * URL): without Redis, a start-up warning says that each applies its own per-host cap.
   */
  storeShared?: boolean;
  /** The chunk worker's lease owner id; default a fresh one. */
  workerId?: string;
  /** The process's reputation guard (`Runtime.guard`): the batch engine skips resting egresses. */
  guard?: EgressGate;
  /** How the worker's row in the store names this process (jobs/worker-presence.ts); default `embedded`. */
  kind?: WorkerKind;
}

/** How often due webhook/e-mail deliveries are looked for. */
const DELIVERY_POLL_MS = 1 * SECOND;
/** How often the retention sweep runs (results are refused at expiry anyway; the sweep frees space). */
const SWEEP_INTERVAL_MS = 1 * MINUTE;
/** How often due scheduled lists are looked for (a run is due to the minute, not the second). */
const SCHEDULE_INTERVAL_MS = 1 * MINUTE;

export function startEmbeddedWorkers(ctx: AppContext, options: BackgroundOptions = {}): BackgroundJobs {
  const { config, logger } = ctx;
  const coordination = options.batchEngine === undefined ? (options.coordination ?? null) : null;
  if (options.batchEngine === undefined && coordination === null && options.storeShared === true) {
    logger.warn(
      { perHostConcurrency: config.batch.perHostConcurrency },
      'no Redis configured (--redis-url): this process applies the per-MX-host session cap and back-off on its own; ' +
        'several worker processes on one store together open up to that cap per process to a host',
    );
  }
  const batchEngine =
    options.batchEngine ??
    createBatchEngine(batchEngineOptions(config), {
      clock: ctx.clock,
      logger,
      ...(coordination ? { coordination } : {}),
      ...(options.guard ? { guard: options.guard } : {}),
      ...(options.metrics ? { observer: options.metrics.engineObserver } : {}),
      // One per-host cap for this process's batches and single verifications (engine/sessions/session-share.ts).
      ...(ctx.sessionShare ? { sessionShare: ctx.sessionShare } : {}),
      // Its NXDOMAIN and "no mail host" answers count only while the resolver is trusted.
      trust: ctx.dnsTrust,
    });
  const worker = createWorker({
    ...(options.workerId === undefined ? {} : { workerId: options.workerId }),
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    verifyChunk: createChunkVerifier({
      verifier: ctx.verifier,
      dnsTrust: ctx.dnsTrust,
      batchEngine,
      testDomain: config.testDomain,
      testModeChunkDelayMs: config.batch.testModeChunkDelayMs,
      coordination,
      resultCache: ctx.resultCache ?? null,
      accountData: accountLookup(ctx),
      verdictLog: ctx.verdictLog,
    }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const notifier = createMailNotifier(ctx.mailer);
  const deliveries = new DeliveryRunner({
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    resolveHost: options.resolveHost ?? systemResolver,
    notifier,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });

  const sweeper = createSweeper({
    db: ctx.db,
    clock: ctx.clock,
    logger,
    auditRetentionMs: config.auditRetentionMs,
    outcomeRetentionMs: config.outcomeRetentionMs,
  });
  sweeper.start(SWEEP_INTERVAL_MS);
  const scheduler = createScheduler({
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    mailer: ctx.mailer ?? null,
  });
  scheduler.start(SCHEDULE_INTERVAL_MS);

  worker.start();
  const presence = startWorkerPresence({
    db: ctx.db,
    clock: ctx.clock,
    logger,
    workerId: worker.id,
    kind: options.kind ?? 'embedded',
    leaseMs: config.batch.leaseMs,
    chunksDone: () => worker.chunksDone,
  });
  deliveries.start(DELIVERY_POLL_MS);
  logger.info({ worker: worker.id }, 'batch workers started');

  let stopped: Promise<void> | undefined;
  return {
    worker,
    deliveries,
    sweeper,
    scheduler,
    stop: () =>
      (stopped ??= (async () => {
        await Promise.all([worker.stop(), deliveries.stop(), sweeper.stop(), scheduler.stop()]);
        await presence.stop();
        if (options.batchEngine === undefined) await batchEngine.close();
        await coordination?.close();
        logger.info({ worker: worker.id }, 'batch workers stopped');
      })()),
  };
}
