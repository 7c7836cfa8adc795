/**
 * A worker process's presence in the store (docs/operators.md, "Service health"): registered at
 * start, beaten every third of the lease by a timer (one UPDATE, off the chunk path), marked
 * stopped on a clean shutdown (services/batches/worker-presence.service.ts), each time with the chunks the
 * worker finished so far. The console lists a worker as live while it beat within the lease
 * (three beats), and counts one that went silent without a clean stop as lost.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { beatPresence, registerPresence, stopPresence } from '../services/batches/worker-presence.service.js';
import type { Executor } from '../store/executor.js';
import type { WorkerKind } from '../store/schema/worker.schema.js';

export interface WorkerPresenceDeps {
  db: Executor;
  clock: Clock;
  logger: Logger;
  workerId: string;
  kind: WorkerKind;
  /** The chunk lease (config.batch.leaseMs): the beat comes every third of it. */
  leaseMs: number;
  /** The chunks the worker finished since it started (Worker.chunksDone), written with each beat. */
  chunksDone: () => number;
}

export interface WorkerPresence {
  /** Stops the beat and marks the worker stopped (a clean shutdown). */
  stop(): Promise<void>;
}

/** Every third of the lease, as the chunk lease renewals (jobs/worker.ts). */
export function heartbeatEvery(leaseMs: number): number {
  return Math.max(50, Math.floor(leaseMs / 3));
}

/** Registers the worker now (in the background) and beats until stop(). */
export function startWorkerPresence(deps: WorkerPresenceDeps): WorkerPresence {
  const { logger, workerId, kind } = deps;
  const failed = (err: unknown): void => logger.warn({ err, worker: workerId }, 'worker heartbeat failed');
  let pending: Promise<void> = registerPresence(deps, workerId, kind, deps.chunksDone()).catch(failed);
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    pending = beatPresence(deps, workerId, kind, deps.chunksDone())
      .catch(failed)
      .finally(() => {
        busy = false;
      });
  }, heartbeatEvery(deps.leaseMs));
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      await stopPresence(deps, workerId, deps.chunksDone()).catch(failed);
    },
  };
}
