/**
 * SQL for the `usage_periods` table: one row per account and billing period, kept after the
 * period ends so that past usage stays queryable.
 */
import { sql } from 'kysely';
import type { Executor } from './executor.js';
import type { UsagePeriodRow } from './schema/accounts.schema.js';

export interface PeriodKey {
  accountId: string;
  periodStart: string;
}

/** Creates the period's row with zero usage if it does not exist yet. */
export async function ensurePeriod(db: Executor, key: PeriodKey & { periodEnd: string }): Promise<void> {
  await db
    .insertInto('usage_periods')
    .values({ account_id: key.accountId, period_start: key.periodStart, period_end: key.periodEnd })
    .onConflict((oc) => oc.columns(['account_id', 'period_start']).doNothing())
    .execute();
}

export async function findPeriod(db: Executor, key: PeriodKey): Promise<UsagePeriodRow | undefined> {
  return db
    .selectFrom('usage_periods')
    .selectAll()
    .where('account_id', '=', key.accountId)
    .where('period_start', '=', key.periodStart)
    .executeTakeFirst();
}

/** All periods of an account, newest first. */
export async function listPeriods(db: Executor, accountId: string): Promise<UsagePeriodRow[]> {
  return db
    .selectFrom('usage_periods')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('period_start', 'desc')
    .execute();
}

/**
 * Counts `count` verifications in one conditional UPDATE: the check and the counting are one
 * atomic statement, so concurrent requests can neither count twice nor pass the limit. Without
 * overage the row changes only when `used + count <= limit`; with overage it always changes and
 * the part beyond the limit is added to `overage_count`. Returns the new row, or undefined
 * when refused (nothing was counted). The period row must exist (`ensurePeriod`).
 */
export async function addUsage(
  db: Executor,
  key: PeriodKey & { count: number; limit: number; overageAllowed: boolean },
): Promise<UsagePeriodRow | undefined> {
  const { count, limit } = key;
  let query = db
    .updateTable('usage_periods')
    .set({
      used: sql<number>`used + ${count}`,
      // Portable CASE instead of GREATEST/MAX: the new overage is the part of this batch above the limit.
      overage_count: sql<number>`overage_count + case
        when used >= ${limit} then ${count}
        when used + ${count} > ${limit} then used + ${count} - ${limit}
        else 0 end`,
    })
    .where('account_id', '=', key.accountId)
    .where('period_start', '=', key.periodStart);
  if (!key.overageAllowed) query = query.where(sql<boolean>`used + ${count} <= ${limit}`);
  return query.returningAll().executeTakeFirst();
}

/**
 * Gives back `count` verifications of a period (a cancelled batch's unprocessed addresses):
 * overage first, as the most recent usage is the part beyond the quota. Never goes below zero.
 */
export async function subtractUsage(
  db: Executor,
  key: PeriodKey & { count: number },
): Promise<UsagePeriodRow | undefined> {
  const { count } = key;
  return db
    .updateTable('usage_periods')
    .set({
      used: sql<number>`case when used >= ${count} then used - ${count} else 0 end`,
      overage_count: sql<number>`case when overage_count >= ${count} then overage_count - ${count} else 0 end`,
    })
    .where('account_id', '=', key.accountId)
    .where('period_start', '=', key.periodStart)
    .returningAll()
    .executeTakeFirst();
}
