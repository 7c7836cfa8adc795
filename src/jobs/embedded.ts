/**
 * Runs the background work of a process that runtime.ts composed (`startEmbeddedWorkers`): the
 * chunk worker (createWorker), the delivery runner (webhooks and e-mails), the retention sweeper
 * (createSweeper) and the list scheduler, each on its interval, with the worker's row in the store;
 * and stops them in order. `serve` starts it when `config.batch.embeddedWorkers`; `mailverdict
 * worker` runs it alone. Several processes may run it on one store: every step claims its work
 * with a lease or a conditional UPDATE.
 */
import type { AppContext } from '../context.js';
import type { DeliveryRunner } from './delivery-runner.js';
import type { Scheduler } from './scheduler.js';
import type { Sweeper } from './sweep.js';
import type { Worker } from './worker.js';
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

/** What runtime.ts built for the background work of a process. */
export interface BackgroundParts {
  ctx: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger'>;
  worker: Worker;
  deliveries: DeliveryRunner;
  sweeper: Sweeper;
  scheduler: Scheduler;
  /** How the worker's row in the store names this process (jobs/worker-presence.ts). */
  kind: WorkerKind;
  /** Closes what was built for these jobs alone (the batch engine, its coordination), once they stopped. */
  closeBuilt(): Promise<void>;
}

/** How often due webhook/e-mail deliveries are looked for. */
const DELIVERY_POLL_MS = 1 * SECOND;
/** How often the retention sweep runs (results are refused at expiry anyway; the sweep frees space). */
const SWEEP_INTERVAL_MS = 1 * MINUTE;
/** How often due scheduled lists are looked for (a run is due to the minute, not the second). */
const SCHEDULE_INTERVAL_MS = 1 * MINUTE;

/** Starts the parts on their intervals; `stop` stops them, then closes what was built for them. */
export function runBackgroundJobs(parts: BackgroundParts): BackgroundJobs {
  const { ctx, worker, deliveries, sweeper, scheduler } = parts;
  const { config, logger } = ctx;
  sweeper.start(SWEEP_INTERVAL_MS);
  scheduler.start(SCHEDULE_INTERVAL_MS);

  worker.start();
  const presence = startWorkerPresence({
    db: ctx.db,
    clock: ctx.clock,
    logger,
    workerId: worker.id,
    kind: parts.kind,
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
        await parts.closeBuilt();
        logger.info({ worker: worker.id }, 'batch workers stopped');
      })()),
  };
}
