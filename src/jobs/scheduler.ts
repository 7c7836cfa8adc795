/**
 * The list scheduler: runs the tick of scheduled re-verification (services/lists/list-runs.service.ts)
 * at start and then every `intervalMs`, one tick at a time, beside the retention sweeper in
 * `serve` (embedded workers) and `mailverdict worker`. Several processes may run it on one store:
 * each due run is claimed by exactly one. `runOnce()` is one deterministic tick.
 */
import type { Logger } from 'pino';
import type { AppContext } from '../context.js';
import { runScheduledLists, type TickReport } from '../services/lists/list-runs.service.js';
import { plansFromConfig } from '../services/usage/plans.js';
import { createScheduleMailer } from '../services/lists/schedule-mail.js';
import { systemResolver } from '../services/webhooks/ssrf.js';

export interface Scheduler {
  runOnce(): Promise<TickReport>;
  /** Ticks now, then every `intervalMs` until stop(). */
  start(intervalMs: number): void;
  /** Stops the timer and waits for a tick in progress. */
  stop(): Promise<void>;
}

export function createScheduler(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config' | 'mailer'> & { logger: Logger },
): Scheduler {
  const { logger } = ctx;
  const mailer = createScheduleMailer(ctx.mailer);
  const deps = {
    db: ctx.db,
    clock: ctx.clock,
    config: ctx.config,
    plans: plansFromConfig(ctx.config),
    resolveHost: systemResolver,
    // The worker's scheduled runs: usage reads (API, dashboard) see them within the cache's TTL.
    usageCache: null,
    logger,
    mailer,
  };
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<unknown> = Promise.resolve();
  const runOnce = (): Promise<TickReport> => runScheduledLists(deps);
  const tick = (): void => {
    ticking = ticking
      .then(runOnce)
      .then((r) => {
        if (r.runs > 0 || r.skipped > 0 || r.compared > 0) logger.info(r, 'scheduled lists');
      })
      .catch((err: unknown) => logger.error({ err }, 'list scheduler tick failed'));
  };
  return {
    runOnce,
    start(intervalMs) {
      if (timer) return;
      timer = setInterval(tick, intervalMs);
      tick();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await ticking;
    },
  };
}
