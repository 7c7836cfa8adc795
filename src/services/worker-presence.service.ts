/**
 * A worker process's row in the store (docs/operators.md, "Service health"): what it registers at
 * start (kind, host, pid, version), its heartbeats and its clean stop, at the injected clock's time.
 * The timer that beats is jobs/worker-presence.ts's.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import type { Executor } from '../store/executor.js';
import type { WorkerKind } from '../store/schema/worker.schema.js';
import { beatWorker, registerWorker, stopWorker } from '../store/worker.store.js';

export interface PresenceDeps {
  db: Executor;
  clock: Clock;
}

let version: string | undefined;
function mailverdictVersion(): string {
  try {
    // src/services and dist/services both sit two levels under the package.
    version ??= (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
  } catch {
    version = 'unknown';
  }
  return version;
}

/** Registers this process's worker `id` as running now (again, if the sweep deleted its row). */
export function registerPresence(deps: PresenceDeps, id: string, kind: WorkerKind): Promise<void> {
  return registerWorker(deps.db, {
    id,
    kind,
    host: hostname(),
    pid: process.pid,
    version: mailverdictVersion(),
    started_at: deps.clock.now().toISOString(),
  });
}

/** One heartbeat; registers the worker again when its row is gone (swept while it was frozen). */
export async function beatPresence(deps: PresenceDeps, id: string, kind: WorkerKind): Promise<void> {
  if (!(await beatWorker(deps.db, id, deps.clock.now().toISOString())))
    await registerPresence(deps, id, kind);
}

/** A clean shutdown: the console forgets the worker instead of counting it lost. */
export function stopPresence(deps: PresenceDeps, id: string): Promise<void> {
  return stopWorker(deps.db, id, deps.clock.now().toISOString());
}
