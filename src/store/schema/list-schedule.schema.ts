/** Tables of scheduled re-verification (migration 0011; docs/dashboard.md). */
import type { Generated, Selectable } from 'kysely';

export interface ListSchedulesTable {
  /** The list: the id of its first upload (`upl_…`). */
  list_id: string;
  account_id: string;
  /** 1 to 365. */
  every_days: number;
  next_run_at: string;
  /** Until when the process that claimed the due run holds it; null when none does. */
  claimed_until: string | null;
  /** The job whose verdicts the kept copy holds (the previous completed run). */
  baseline_job: string | null;
  /** The last run skipped for quota, until a run is made again. */
  skipped_at: string | null;
  /** Addresses that skipped run needed. */
  skipped_need: number | null;
  created_at: string;
  /**
   * While the kept copy is being made: until when the request making it holds it (migration
   * 0014). Null once the copy is whole; a schedule whose copy is not whole never runs.
   */
  copying_until: string | null;
}

/** The kept copy of the list, one row per part (`seq`), in the list's order. */
export interface ListScheduleRowsTable {
  list_id: string;
  seq: number;
  /** JSON array of the addresses. */
  emails: string;
  /** JSON array, per address: the row's other cells. */
  cells: string;
  /** JSON array, per address: its verdict in the list's last completed run (the diff's baseline). */
  statuses: string;
}

export type ListRunOutcome = 'submitted' | 'skipped_quota';

export interface ListRunsTable {
  /** `run_<base62>`. */
  id: string;
  list_id: string;
  /** The run's job; null for a skipped run. */
  job_id: string | null;
  outcome: ListRunOutcome;
  total: number;
  created_at: string;
  /** When the run's results were compared with the previous run's; null until then. */
  compared_at: string | null;
  /** The job compared with (the list's previous completed run). */
  compared_with: string | null;
  became_undeliverable: number | null;
  became_deliverable: number | null;
  /** Steps of the comparison committed so far (migration 0014); each step's optimistic lock. */
  compare_step: Generated<number>;
  /** The comparison's progress between its steps (JSON); null before the first. */
  comparing: string | null;
}

export interface ListRunChangesTable {
  job_id: string;
  part: number;
  /** JSON array of changed rows (services/lists/list-runs.service.ts). */
  rows: string;
}

export interface ListScheduleTables {
  list_schedules: ListSchedulesTable;
  list_schedule_rows: ListScheduleRowsTable;
  list_runs: ListRunsTable;
  list_run_changes: ListRunChangesTable;
}

export type ListScheduleRow = Selectable<ListSchedulesTable>;
export type ListRunRow = Selectable<ListRunsTable>;
