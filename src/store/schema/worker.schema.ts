/** The worker processes on the store (migrations 0013 and 0015; docs/operators.md, "Service health"). */
import type { Selectable } from 'kysely';

/** `embedded`: the workers of a `serve`; `worker`: a `mailverdict worker` process. */
export type WorkerKind = 'embedded' | 'worker';

export interface WorkersTable {
  /** The chunk worker's lease owner id (`wkr_…`). */
  id: string;
  kind: WorkerKind;
  host: string;
  pid: number;
  /** The mailverdict version it runs. */
  version: string;
  started_at: string;
  last_heartbeat_at: string;
  /** Chunks it finished since it started, as of its last heartbeat (0 for an older version's). */
  chunks_done: number;
  /** Set by a clean shutdown; null while it runs, or when it died without one. */
  stopped_at: string | null;
}

export type WorkerRow = Selectable<WorkersTable>;

export interface WorkerTables {
  workers: WorkersTable;
}
