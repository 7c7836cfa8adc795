/**
 * SQL for `usage_days`: live verifications counted per account and UTC day, written by the same
 * transaction that counts them against the quota (services/usage/usage.service.ts), so that the days
 * of a period always add up to what the period counted.
 */
import { sql } from 'kysely';
import type { Executor } from './executor.js';
import type { UsageDayRow } from './schema/dashboard.schema.js';

export type UsageSource = 'single' | 'batch';

/** Adds `count` to the day's `source` column, creating the day's row on first use. */
export async function addDayUsage(
  db: Executor,
  input: { accountId: string; day: string; source: UsageSource; count: number },
): Promise<void> {
  const single = input.source === 'single' ? input.count : 0;
  const batch = input.source === 'batch' ? input.count : 0;
  await db
    .insertInto('usage_days')
    .values({ account_id: input.accountId, day: input.day, single, batch })
    .onConflict((oc) =>
      oc.columns(['account_id', 'day']).doUpdateSet({
        single: sql<number>`usage_days.single + ${single}`,
        batch: sql<number>`usage_days.batch + ${batch}`,
      }),
    )
    .execute();
}

/** Gives back batch addresses counted on `day` (a cancelled job's unprocessed ones); never below zero. */
export async function subtractDayBatch(
  db: Executor,
  input: { accountId: string; day: string; count: number },
): Promise<void> {
  await db
    .updateTable('usage_days')
    .set({ batch: sql<number>`case when batch >= ${input.count} then batch - ${input.count} else 0 end` })
    .where('account_id', '=', input.accountId)
    .where('day', '=', input.day)
    .execute();
}

/** The account's stored days from `from` (inclusive) to `to` (exclusive), oldest first. */
export async function listDayUsage(
  db: Executor,
  accountId: string,
  from: string,
  to: string,
): Promise<UsageDayRow[]> {
  return db
    .selectFrom('usage_days')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('day', '>=', from)
    .where('day', '<', to)
    .orderBy('day')
    .execute();
}
