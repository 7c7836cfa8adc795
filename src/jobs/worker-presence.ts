/**
 * A worker process's row in the store (docs/operators.md, "Service health"): registered at start,
 * beaten every third of the lease by a timer (one UPDATE, off the chunk path), marked stopped on a
 * clean shutdown. The console lists a worker as live while it beat within the lease (three
 * beats), and counts one that went silent without a clean stop as lost.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Executor } from '../store/executor.js';
import type { WorkerKind } from '../store/schema/worker.schema.js';
import { beatWorker, registerWorker, stopWorker } from '../store/worker.store.js';

export interface WorkerPresenceDeps {
  db: Executor;
  clock: Clock;
  logger: Logger;
  workerId: string;
  kind: WorkerKind;
  /** The chunk lease (config.batch.leaseMs): the beat comes every third of it. */
  leaseMs: number;
}

export interface WorkerPresence {
  /** Stops the beat and marks the worker stopped (a clean shutdown). */
  stop(): Promise<void>;
}

/** Every third of the lease, as the chunk lease renewals (jobs/worker.ts). */
export function heartbeatEvery(leaseMs: number): number {
  return Math.max(50, Math.floor(leaseMs / 3));
}

let version: string | undefined;
function mailverdictVersion(): string {
  try {
    // src/jobs and dist/jobs both sit two levels under the package.
    version ??= (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
  } catch {
    version = 'unknown';
  }
  return version;
}

/** Registers the worker now (in the background) and beats until stop(). */
export function startWorkerPresence(deps: WorkerPresenceDeps): WorkerPresence {
  const { db, clock, logger, workerId } = deps;
  const register = (): Promise<void> =>
    registerWorker(db, {
      id: workerId,
      kind: deps.kind,
      host: hostname(),
      pid: process.pid,
      version: mailverdictVersion(),
      started_at: clock.now().toISOString(),
    });
  const failed = (err: unknown): void => logger.warn({ err, worker: workerId }, 'worker heartbeat failed');
  let pending: Promise<void> = register().catch(failed);
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    pending = beatWorker(db, workerId, clock.now().toISOString())
      .then((held) => (held ? undefined : register()))
      .catch(failed)
      .finally(() => {
        busy = false;
      });
  }, heartbeatEvery(deps.leaseMs));
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      await stopWorker(db, workerId, clock.now().toISOString()).catch(failed);
    },
  };
}
