/**
 * The dashboard's overview: the usage of GET /v1/account/usage, verifications per day for the
 * current and the previous billing period (every day, zeros included; from `usage_days`, which
 * the quota's own transaction writes), and the latest jobs.
 */
import { DAY } from '../clock.js';
import type { Executor } from '../store/executor.js';
import { listDayUsage } from '../store/usage-day.store.js';
import { getAccount } from './accounts.service.js';
import { billingPeriodAt, type BillingPeriod } from './billing-period.js';
import { latestJobItems, type DashboardJob } from './dashboard-jobs.service.js';
import type { JobsDeps } from './jobs.service.js';
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
  latest_jobs: DashboardJob[];
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

export async function getOverview(deps: OverviewDeps, accountId: string): Promise<AccountOverview> {
  const now = deps.clock.now();
  const usage = await getUsage(deps.db, { accountId, now, plans: deps.plans, usageCache: deps.usageCache });
  const account = await getAccount(deps.db, accountId);
  const current = currentPeriod(account, now);
  const previous = billingPeriodAt(new Date(account.created_at), new Date(current.start.getTime() - 1));
  const rows = await listDayUsage(deps.db, accountId, usageDay(previous.start), usageDay(current.end));
  const stored = new Map(rows.map((r) => [r.day, { date: r.day, single: r.single, batch: r.batch }]));
  return {
    usage,
    daily: { current: daysOf(current, stored), previous: daysOf(previous, stored) },
    latest_jobs: await latestJobItems(deps, accountId, LATEST_JOBS),
  };
}
