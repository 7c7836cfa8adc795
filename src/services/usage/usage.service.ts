/**
 * Quota: counting verifications against an account's monthly quota, and reading usage.
 *
 * Rules (docs/api.md): only live keys count; one successful live POST /v1/verify counts one,
 * counted before the probe and never refunded (an `unknown` verdict still cost a probe); a
 * batch counts one per address, and a cancelled batch refunds its unprocessed addresses.
 */
import { AppError } from '../../errors.js';
import { findAccountById } from '../../store/account.store.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import {
  addUsage,
  ensurePeriod,
  findAccountWithPeriodAt,
  findPeriod,
  listPeriods,
  subtractUsage,
} from '../../store/usage.store.js';
import { addDayUsage, subtractDayBatch, type UsageSource } from '../../store/usage-day.store.js';
import type { AccountRow } from '../../store/schema/accounts.schema.js';
import { billingPeriodAt, type BillingPeriod } from './billing-period.js';
import type { UsageCache } from './usage-cache.js';
import { accountLimits, type PlanSlug, type PlanTable } from './plans.js';

export interface QuotaConsumption {
  periodStart: string;
  periodEnd: string;
  /** null: the account has no quota. */
  limit: number | null;
  used: number;
  overageCount: number;
}

async function requireAccount(db: Executor, accountId: string): Promise<AccountRow> {
  const account = await findAccountById(db, accountId);
  if (!account) throw new AppError('not_found', `no account ${accountId}`);
  return account;
}

/** The account's billing period that contains `now`. */
export function currentPeriod(account: Pick<AccountRow, 'created_at'>, now: Date): BillingPeriod {
  return billingPeriodAt(new Date(account.created_at), now);
}

/** The UTC day (YYYY-MM-DD) a count made at `at` is kept under in `usage_days`. */
export function usageDay(at: Date | string): string {
  return (typeof at === 'string' ? at : at.toISOString()).slice(0, 10);
}

/**
 * Counts `count` verifications in the account's current period, as one atomic step. Without
 * overage, a count that does not fit in what remains is refused as a whole with AppError
 * `quota_exceeded` and nothing is counted; with overage it is counted and the part beyond the
 * quota grows `overageCount`. Keep the returned `periodStart` to refund later. The same
 * transaction adds the count to the day's `source` column (`usage_days`, the dashboard's chart;
 * default `single`), so the days of a period always add up to what it counted.
 */
export async function consumeQuota(
  db: Executor,
  input: {
    accountId: string;
    count: number;
    now: Date;
    plans: PlanTable;
    usageCache?: UsageCache;
    source?: UsageSource;
  },
): Promise<QuotaConsumption> {
  if (!Number.isInteger(input.count) || input.count < 1)
    throw new RangeError('count must be a positive integer');
  input.usageCache?.invalidate(input.accountId);
  try {
    return await inTransaction(db, (trx) => countQuota(trx, input));
  } finally {
    input.usageCache?.invalidate(input.accountId);
  }
}

/** Said in every over-quota message: who can change it, and how (issue 25). */
export const RAISE_QUOTA =
  "The service's operator raises an account's quota: `mailverdict accounts set-plan ACCOUNT_ID --plan unlimited` " +
  '(or another plan), `--quota-limit` on `accounts create`, or the operator console at /operator';

async function countQuota(
  db: Executor,
  input: { accountId: string; count: number; now: Date; plans: PlanTable; source?: UsageSource },
): Promise<QuotaConsumption> {
  const account = await requireAccount(db, input.accountId);
  const limits = accountLimits(input.plans, account);
  const period = currentPeriod(account, input.now);
  const key = { accountId: account.id, periodStart: period.start.toISOString() };
  await ensurePeriod(db, { ...key, periodEnd: period.end.toISOString() });
  const row = await addUsage(db, {
    ...key,
    count: input.count,
    limit: limits.quotaLimit,
    overageAllowed: limits.overageEnabled,
  });
  if (!row) {
    // Only a quota refuses (addUsage always counts without one).
    const limit = limits.quotaLimit ?? 0;
    const current = await findPeriod(db, key);
    const remaining = Math.max(0, limit - (current?.used ?? 0));
    throw new AppError(
      'quota_exceeded',
      (input.count === 1
        ? `the monthly quota of ${limit} verifications is used up; it resets at ${period.end.toISOString()}`
        : `${input.count} verifications requested but only ${remaining} remain of the monthly quota of ${limit}; it resets at ${period.end.toISOString()}`) +
        `. ${RAISE_QUOTA}`,
      { limit, remaining, resetAt: period.end.toISOString() },
    );
  }
  await addDayUsage(db, {
    accountId: account.id,
    day: usageDay(input.now),
    source: input.source ?? 'single',
    count: input.count,
  });
  return {
    periodStart: row.period_start,
    periodEnd: row.period_end,
    limit: limits.quotaLimit,
    used: row.used,
    overageCount: row.overage_count,
  };
}

/**
 * Gives back verifications counted in the period that started at `periodStart`. With
 * `countedAt` (when they were counted: a job's created_at), that day's batch count gives them
 * back too, in the same transaction.
 */
export async function refundQuota(
  db: Executor,
  input: {
    accountId: string;
    count: number;
    periodStart: string;
    usageCache?: UsageCache;
    countedAt?: string;
  },
): Promise<void> {
  if (!Number.isInteger(input.count) || input.count < 0)
    throw new RangeError('count must be a non-negative integer');
  if (input.count === 0) return;
  input.usageCache?.invalidate(input.accountId);
  try {
    await inTransaction(db, async (trx) => {
      await subtractUsage(trx, {
        accountId: input.accountId,
        count: input.count,
        periodStart: input.periodStart,
      });
      if (input.countedAt !== undefined)
        await subtractDayBatch(trx, {
          accountId: input.accountId,
          day: usageDay(input.countedAt),
          count: input.count,
        });
    });
  } finally {
    input.usageCache?.invalidate(input.accountId);
  }
}

/** The usage object of GET /v1/account/usage (without request_id). */
export interface AccountUsage {
  plan: PlanSlug;
  period_start: string;
  period_end: string;
  /** `limit` and `remaining` null: the account has no quota (plan `unlimited`). */
  quota: { limit: number | null; used: number; remaining: number | null; reset_at: string };
  rate_limit: { per_second: number };
  overage: { enabled: boolean; rate_per_verification: number; current_overage_count: number };
}

/**
 * Usage of the account's current billing period. With `usageCache`, read through it: up to its
 * TTL behind counts made by other processes (services/usage/usage-cache.ts).
 */
export async function getUsage(
  db: Executor,
  input: { accountId: string; now: Date; plans: PlanTable; usageCache?: UsageCache },
): Promise<AccountUsage> {
  const read = () => findAccountWithPeriodAt(db, input.accountId, input.now.toISOString());
  const found = await (input.usageCache ? input.usageCache.read(input.accountId, read) : read());
  if (!found) throw new AppError('not_found', `no account ${input.accountId}`);
  const { account } = found;
  const limits = accountLimits(input.plans, account);
  const period = currentPeriod(account, input.now);
  const periodStart = period.start.toISOString();
  const periodEnd = period.end.toISOString();
  // The stored row is the current period's when their starts agree (they always do: both come
  // from the account's creation day); anything else counts as nothing used yet.
  const row = found.period?.period_start === periodStart ? found.period : null;
  const used = row?.used ?? 0;
  return {
    plan: limits.plan,
    period_start: periodStart,
    period_end: periodEnd,
    quota: {
      limit: limits.quotaLimit,
      used,
      remaining: limits.quotaLimit === null ? null : Math.max(0, limits.quotaLimit - used),
      reset_at: periodEnd,
    },
    rate_limit: { per_second: limits.ratePerSecond },
    overage: {
      enabled: limits.overageEnabled,
      rate_per_verification: limits.overageRatePerVerification,
      current_overage_count: row?.overage_count ?? 0,
    },
  };
}

/** Every recorded period of the account, newest first (past periods stay in the store). */
export async function getUsageHistory(
  db: Executor,
  accountId: string,
): Promise<{ period_start: string; period_end: string; used: number; overage_count: number }[]> {
  const rows = await listPeriods(db, accountId);
  return rows.map((r) => ({
    period_start: r.period_start,
    period_end: r.period_end,
    used: r.used,
    overage_count: r.overage_count,
  }));
}
