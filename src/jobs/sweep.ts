/**
 * The retention sweeper: runs the retention sweep (services/batches/retention.service.ts) at start and
 * then every `intervalMs`, one pass at a time. `createSweeper` serves `serve`, `mailverdict
 * worker` and the tests; `runOnce()` is one deterministic pass.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { AppContext } from '../context.js';
import { sweepExpired, type SweepReport } from '../services/batches/retention.service.js';

export type { SweepReport };

export interface SweeperDeps {
  db: AppContext['db'];
  clock: Clock;
  logger: Logger;
  /** How long the security log's entries are kept (config.auditRetentionMs). */
  auditRetentionMs?: number;
  /** How long delivery outcomes are kept (config.outcomeRetentionMs). */
  outcomeRetentionMs?: number;
}

export interface Sweeper {
  /** One full sweep. */
  runOnce(): Promise<SweepReport>;
  /** Sweeps now, then every `intervalMs` until stop(). */
  start(intervalMs: number): void;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

export function createSweeper(deps: SweeperDeps): Sweeper {
  const { logger } = deps;
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<unknown> = Promise.resolve();
  const runOnce = (): Promise<SweepReport> => sweepExpired(deps);
  const sweep = (): void => {
    sweeping = runOnce()
      .then((r) => {
        if (
          r.jobs > 0 ||
          r.idempotencyKeys > 0 ||
          r.auditEntries > 0 ||
          r.outcomeEvents > 0 ||
          r.verdicts > 0 ||
          r.workers > 0
        )
          logger.info(r, 'retention sweep');
      })
      .catch((err: unknown) => logger.error({ err }, 'retention sweep failed'));
  };
  return {
    runOnce,
    start(intervalMs) {
      if (timer) return;
      timer = setInterval(sweep, intervalMs);
      sweep();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await sweeping;
    },
  };
}

/** One sweep of `db` (what `createSweeper(…).runOnce()` runs), for callers without a logger. */
export function sweepOnce(
  db: AppContext['db'],
  clock: Clock,
  auditRetentionMs?: number,
): Promise<SweepReport> {
  return sweepExpired({ db, clock, ...(auditRetentionMs === undefined ? {} : { auditRetentionMs }) });
}
