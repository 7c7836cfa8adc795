/**
 * The dashboard's overview: the usage of GET /v1/account/usage, verifications per day for the
 * current and the previous billing period (every day, zeros included; from `usage_days`, which
 * the quota's own transaction writes), the overage cost so far, and the latest jobs; and the
 * same days as a CSV download.
 */
import { DAY } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import { listDayUsage } from '../../store/usage-day.store.js';
import { getAccount } from '../accounts/accounts.service.js';
import { csvRows } from '../csv-export.js';
import { billingPeriodAt, type BillingPeriod } from './billing-period.js';
import { latestJobItems, type DashboardJob } from '../batches/job-list.service.js';
import { capNotices, type CapNotice } from '../keys/key-cap.service.js';
import { scheduleNotices, type ScheduleNotice } from '../lists/list-schedule.service.js';
import type { JobsDeps } from '../batches/jobs.service.js';
import type { PlanTable } from './plans.js';
import type { UsageCache } from './usage-cache.js';
import { currentPeriod, getUsage, usageDay, type AccountUsage } from './usage.service.js';

/** Verifications counted on one UTC day (YYYY-MM-DD), by where they came from. */
export interface DayCount {
  date: string;
  single: number;
  batch: number;
}

export interface AccountOverview {
  usage: AccountUsage;
  daily: { current: DayCount[]; previous: DayCount[] };
  /** `current_overage_count × rate_per_verification` while overage is on; null when it is off. */
  overage_cost: number | null;
  latest_jobs: DashboardJob[];
  schedule_notices: ScheduleNotice[];
  /** Publishable keys at their daily cap today (issue 26): the page may be spent by strangers. */
  cap_notices: CapNotice[];
  /** Set while an operator has the account suspended (docs/operators.md): the banner's words. */
  suspension: { since: string; reason: string | null } | null;
}

/** Jobs shown on the overview. */
export const LATEST_JOBS = 5;

export interface OverviewDeps extends JobsDeps {
  db: Executor;
  plans: PlanTable;
  usageCache?: UsageCache;
}

/** Every UTC day of the period, with the stored counts or zeros. */
function daysOf(period: BillingPeriod, stored: ReadonlyMap<string, DayCount>): DayCount[] {
  const days: DayCount[] = [];
  for (let t = period.start.getTime(); t < period.end.getTime(); t += DAY) {
    const date = usageDay(new Date(t));
    days.push(stored.get(date) ?? { date, single: 0, batch: 0 });
  }
  return days;
}

/** The cost of the verifications beyond the quota so far, rounded to millionths (float noise). */
export function overageCost({ overage }: AccountUsage): number | null {
  if (!overage.enabled) return null;
  return Math.round(overage.current_overage_count * overage.rate_per_verification * 1e6) / 1e6;
}

async function dailyCounts(
  deps: OverviewDeps,
  accountId: string,
  now: Date,
): Promise<AccountOverview['daily']> {
  const account = await getAccount(deps.db, accountId);
  const current = currentPeriod(account, now);
  const previous = billingPeriodAt(new Date(account.created_at), new Date(current.start.getTime() - 1));
  const rows = await listDayUsage(deps.db, accountId, usageDay(previous.start), usageDay(current.end));
  const stored = new Map(rows.map((r) => [r.day, { date: r.day, single: r.single, batch: r.batch }]));
  return { current: daysOf(current, stored), previous: daysOf(previous, stored) };
}

export async function getOverview(deps: OverviewDeps, accountId: string): Promise<AccountOverview> {
  const now = deps.clock.now();
  const usage = await getUsage(deps.db, { accountId, now, plans: deps.plans, usageCache: deps.usageCache });
  const account = await getAccount(deps.db, accountId);
  return {
    usage,
    daily: await dailyCounts(deps, accountId, now),
    overage_cost: overageCost(usage),
    latest_jobs: await latestJobItems(deps, accountId, LATEST_JOBS),
    schedule_notices: await scheduleNotices(deps.db, accountId),
    cap_notices: await capNotices(
      { db: deps.db, clock: deps.clock, plans: deps.plans, defaults: deps.config.publishable },
      accountId,
    ),
    suspension:
      account.suspended_at === null
        ? null
        : { since: account.suspended_at, reason: account.suspended_reason },
  };
}

/**
 * GET /overview/daily.csv: every day of the previous and the current billing period, oldest
 * first, as `date,period,single,batch,total` (the numbers of the overview's chart).
 */
export async function dailyUsageCsv(deps: OverviewDeps, accountId: string): Promise<string> {
  const { previous, current } = await dailyCounts(deps, accountId, deps.clock.now());
  const row = (period: string) => (d: DayCount) => [d.date, period, d.single, d.batch, d.single + d.batch];
  return csvRows([
    ['date', 'period', 'single', 'batch', 'total'],
    ...previous.map(row('previous')),
    ...current.map(row('current')),
  ]);
}
