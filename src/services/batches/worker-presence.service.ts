/**
 * A worker process's row in the store (docs/operators.md, "Service health"): what it registers at
 * start (kind, host, pid, version), its heartbeats and its clean stop, at the injected clock's time,
 * each with the chunks it finished so far.
 * The timer that beats is jobs/worker-presence.ts's.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import type { WorkerKind } from '../../store/schema/worker.schema.js';
import { beatWorker, registerWorker, stopWorker } from '../../store/worker.store.js';

export interface PresenceDeps {
  db: Executor;
  clock: Clock;
}

let version: string | undefined;
function mailverdictVersion(): string {
  try {
    // src/services/batches and dist/services/batches both sit three levels under the package.
    version ??= (
      JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    version = 'unknown';
  }
  return version;
}

/**
 * Registers this process's worker `id` as running now (again, if the sweep deleted its row), with
 * the chunks it finished so far.
 */
export function registerPresence(
  deps: PresenceDeps,
  id: string,
  kind: WorkerKind,
  chunksDone: number,
): Promise<void> {
  return registerWorker(deps.db, {
    id,
    kind,
    host: hostname(),
    pid: process.pid,
    version: mailverdictVersion(),
    started_at: deps.clock.now().toISOString(),
    chunks_done: chunksDone,
  });
}

/**
 * One heartbeat with the chunks finished so far; registers the worker again when its row is gone
 * (swept while it was frozen).
 */
export async function beatPresence(
  deps: PresenceDeps,
  id: string,
  kind: WorkerKind,
  chunksDone: number,
): Promise<void> {
  if (!(await beatWorker(deps.db, id, deps.clock.now().toISOString(), chunksDone)))
    await registerPresence(deps, id, kind, chunksDone);
}

/** A clean shutdown: the console forgets the worker instead of counting it lost. */
export function stopPresence(deps: PresenceDeps, id: string, chunksDone: number): Promise<void> {
  return stopWorker(deps.db, id, deps.clock.now().toISOString(), chunksDone);
}
