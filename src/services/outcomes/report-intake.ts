/**
 * What came in (docs/outcomes.md, "The dashboard's Outcomes page"): the account's delivery outcomes
 * of the last days, counted per day of intake and per source, each with its count per type.
 */
import { DAY, type Clock } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import { intakeCounts } from '../../store/outcome.store.js';
import { OUTCOME_TYPES, type OutcomeType } from './outcome-types.js';

export type TypeCounts = Record<OutcomeType, number>;

export interface IntakeSummary {
  /** The first day counted (UTC, YYYY-MM-DD); the last is today. */
  since: string;
  /** Newest day first; only days with events. */
  by_day: { day: string; total: number; by_type: TypeCounts }[];
  /** Most events first. */
  by_source: { source: string; total: number; by_type: TypeCounts }[];
  total: number;
}

const noTypes = (): TypeCounts => Object.fromEntries(OUTCOME_TYPES.map((t) => [t, 0])) as TypeCounts;

/** The last `days` days (today included) of the account's intake. */
export async function intakeSummary(
  deps: { db: Executor; clock: Clock },
  accountId: string,
  days: number,
): Promise<IntakeSummary> {
  const today = deps.clock.now().toISOString().slice(0, 10);
  const since = new Date(Date.parse(`${today}T00:00:00.000Z`) - (days - 1) * DAY).toISOString();
  const byDay = new Map<string, { day: string; total: number; by_type: TypeCounts }>();
  const bySource = new Map<string, { source: string; total: number; by_type: TypeCounts }>();
  let total = 0;
  for (const row of await intakeCounts(deps.db, accountId, since)) {
    const type = row.type as OutcomeType;
    const d = byDay.get(row.day) ?? { day: row.day, total: 0, by_type: noTypes() };
    const s = bySource.get(row.source) ?? { source: row.source, total: 0, by_type: noTypes() };
    for (const entry of [d, s]) {
      entry.total += row.count;
      entry.by_type[type] += row.count;
    }
    byDay.set(row.day, d);
    bySource.set(row.source, s);
    total += row.count;
  }
  return {
    since: since.slice(0, 10),
    by_day: [...byDay.values()].sort((a, b) => (a.day < b.day ? 1 : -1)),
    by_source: [...bySource.values()].sort((a, b) => b.total - a.total || (a.source < b.source ? -1 : 1)),
    total,
  };
}
