/**
 * The worker processes on the store (docs/operators.md, "Service health"): a row per worker,
 * registered at start, beaten on a timer, marked stopped on a clean shutdown, deleted by the
 * sweep once not seen for long. Every time is an ISO string, so comparisons are text ones.
 */
import type { Executor } from './executor.js';
import type { WorkerRow } from './schema/worker.schema.js';

/** Registers (or re-registers, after the sweep deleted it) a worker that runs now. */
export async function registerWorker(
  db: Executor,
  worker: Omit<WorkerRow, 'last_heartbeat_at' | 'stopped_at'>,
): Promise<void> {
  await db
    .insertInto('workers')
    .values({ ...worker, last_heartbeat_at: worker.started_at, stopped_at: null })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({
        last_heartbeat_at: worker.started_at,
        chunks_done: worker.chunks_done,
        stopped_at: null,
      }),
    )
    .execute();
}

/**
 * One heartbeat, with the chunks the worker finished so far: false when the row is gone (swept
 * while the process was frozen).
 */
export async function beatWorker(db: Executor, id: string, at: string, chunksDone: number): Promise<boolean> {
  const result = await db
    .updateTable('workers')
    .set({ last_heartbeat_at: at, chunks_done: chunksDone })
    .where('id', '=', id)
    .where('stopped_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A clean shutdown, with the chunks the worker finished in all. */
export async function stopWorker(db: Executor, id: string, at: string, chunksDone: number): Promise<void> {
  await db
    .updateTable('workers')
    .set({ stopped_at: at, last_heartbeat_at: at, chunks_done: chunksDone })
    .where('id', '=', id)
    .execute();
}

/** Workers not stopped that beat at or after `since`, oldest start first. */
export async function listLiveWorkers(db: Executor, since: string): Promise<WorkerRow[]> {
  return db
    .selectFrom('workers')
    .selectAll()
    .where('stopped_at', 'is', null)
    .where('last_heartbeat_at', '>=', since)
    .orderBy('started_at')
    .orderBy('id')
    .execute();
}

/** Workers that stopped beating without a clean stop: last beat in [`from`, `before`). */
export async function countLostWorkers(db: Executor, from: string, before: string): Promise<number> {
  const row = await db
    .selectFrom('workers')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('stopped_at', 'is', null)
    .where('last_heartbeat_at', '>=', from)
    .where('last_heartbeat_at', '<', before)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes the rows of workers not seen since `before` (stopped or lost); how many. */
export async function deleteStaleWorkers(db: Executor, before: string): Promise<number> {
  const result = await db.deleteFrom('workers').where('last_heartbeat_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Which of `ids` have a row (live, stopped or lost). */
export async function knownWorkerIds(db: Executor, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('workers').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}
