/**
 * SQLite's work watch (StoreBackend.onWork): wakes this process's workers when it queues a job.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { StatementWatcher } from './sqlite-statement-cache.js';

/** Kysely's SQL for a job insert (store/job.store.ts insertJob). */
const INSERTS_JOB = /^\s*insert\s+into\s+"?jobs"?[\s(]/i;

export interface WorkWatch {
  watcher: StatementWatcher;
  onWork: (listener: () => void) => () => void;
  /** Called by the driver when a transaction ends: a job queued in it is announced at commit. */
  transactionEnded: (committed: boolean) => void;
}

/**
 * Tells this process's workers (the embedded worker of `serve`) about a job this process queued,
 * as soon as its transaction commits, instead of at their next poll. SQLite cannot tell other
 * processes: a standalone `mailverdict worker` on the same file finds the job by polling.
 */
export function watchQueuedWork(sqlite: BetterSqlite3.Database): WorkWatch {
  const listeners = new Set<() => void>();
  let queuedInTransaction = false;
  const announce = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const watcher: StatementWatcher = {
    matches: (sql) => INSERTS_JOB.test(sql),
    beforeRun: () => {
      if (sqlite.inTransaction) queuedInTransaction = true;
      // Outside a transaction the insert commits as it runs, synchronously right after this
      // (better-sqlite3): a microtask comes after it.
      else queueMicrotask(announce);
    },
  };
  return {
    watcher,
    onWork: (listener: () => void): (() => void) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    transactionEnded: (committed: boolean): void => {
      const queued = queuedInTransaction;
      queuedInTransaction = false;
      if (queued && committed) announce();
    },
  };
}
