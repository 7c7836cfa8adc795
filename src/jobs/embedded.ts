/**
 * The background work of a process: the chunk worker, the delivery runner (webhooks and
 * e-mails) and the retention sweep. `serve` starts it when `config.batch.embeddedWorkers`;
 * `mailverdict worker` runs it alone. Several processes may run it on one store: every step
 * claims its work with a lease or a conditional UPDATE.
 */
import { batchEngineOptions } from '../config.js';
import type { AppContext } from '../context.js';
import { createBatchEngine } from '../engine/batch/batch-engine.js';
import type { BatchEngine } from '../engine/batch/types.js';
import { systemResolver, type HostResolver } from '../services/webhooks/ssrf.js';
import { createChunkVerifier } from './chunk-verifier.js';
import { DeliveryRunner } from './delivery-runner.js';
import type { JobMetrics } from './job-metrics.js';
import { createMailNotifier } from './notify.js';
import { sweepOnce } from './sweep.js';
import { Worker } from './worker.js';
import { SECOND, MINUTE } from '../clock.js';

export interface BackgroundJobs {
  worker: Worker;
  deliveries: DeliveryRunner;
  /** Stops claiming, hands unfinished chunks back, waits for in-flight deliveries, closes the engine. */
  stop(): Promise<void>;
}

export interface BackgroundOptions {
  /** Default: a batch engine built from the config (live jobs). */
  batchEngine?: BatchEngine;
  resolveHost?: HostResolver;
  /** Job metrics on the process's /metrics registry (serve); absent for a standalone worker. */
  metrics?: JobMetrics;
}

/** How often due webhook/e-mail deliveries are looked for. */
const DELIVERY_POLL_MS = 1 * SECOND;
/** How often the retention sweep runs (results are refused at expiry anyway; the sweep frees space). */
const SWEEP_INTERVAL_MS = 1 * MINUTE;

export function startEmbeddedWorkers(ctx: AppContext, options: BackgroundOptions = {}): BackgroundJobs {
  const { config, logger } = ctx;
  const batchEngine =
    options.batchEngine ??
    createBatchEngine(batchEngineOptions(config), {
      clock: ctx.clock,
      logger,
      ...(options.metrics ? { observer: options.metrics.engineObserver } : {}),
    });
  const worker = new Worker({
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    verifyChunk: createChunkVerifier({
      verifier: ctx.verifier,
      batchEngine,
      testDomain: config.testDomain,
      testModeChunkDelayMs: config.batch.testModeChunkDelayMs,
    }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const notifier = createMailNotifier(config);
  const deliveries = new DeliveryRunner({
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    resolveHost: options.resolveHost ?? systemResolver,
    notifier,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });

  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = (): void => {
    sweeping = sweepOnce(ctx.db, ctx.clock)
      .then((r) => {
        if (r.jobs > 0 || r.idempotencyKeys > 0) logger.info(r, 'retention sweep');
      })
      .catch((err: unknown) => logger.error({ err }, 'retention sweep failed'));
  };
  const sweepTimer = setInterval(sweep, SWEEP_INTERVAL_MS);
  sweep();

  worker.start();
  deliveries.start(DELIVERY_POLL_MS);
  logger.info({ worker: worker.id }, 'batch workers started');

  let stopped: Promise<void> | undefined;
  return {
    worker,
    deliveries,
    stop: () =>
      (stopped ??= (async () => {
        clearInterval(sweepTimer);
        await Promise.all([worker.stop(), deliveries.stop(), sweeping]);
        notifier?.close();
        if (options.batchEngine === undefined) await batchEngine.close();
        logger.info({ worker: worker.id }, 'batch workers stopped');
      })()),
  };
}
