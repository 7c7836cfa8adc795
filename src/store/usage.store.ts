/**
 * SQL for the `usage_periods` table: one row per account and billing period, kept after the
 * period ends so that past usage stays queryable.
 */
import { sql, type CompiledQuery } from 'kysely';
import type { Executor } from './executor.js';
import type { AccountRow, UsagePeriodRow } from './schema/accounts.schema.js';

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

/** An account and the counts of its period containing `at` (ISO), if one is stored. */
export interface AccountWithPeriod {
  account: AccountRow;
  period: Pick<UsagePeriodRow, 'period_start' | 'used' | 'overage_count'> | null;
}

/**
 * The account and its stored period containing `at`, in one query: reading the usage this way
 * costs one round trip to the store instead of two (on PostgreSQL, most of the request's cost).
 */
function accountWithPeriodQuery(db: Executor, accountId: string, at: string) {
  return db
    .selectFrom('accounts')
    .leftJoin('usage_periods as up', (join) =>
      join
        .onRef('up.account_id', '=', 'accounts.id')
        .on('up.period_start', '<=', at)
        .on('up.period_end', '>', at),
    )
    .selectAll('accounts')
    .select(['up.period_start', 'up.used', 'up.overage_count'])
    .where('accounts.id', '=', accountId);
}

type AccountWithPeriodRow = Awaited<
  ReturnType<ReturnType<typeof accountWithPeriodQuery>['executeTakeFirstOrThrow']>
>;

/** Compiled once per executor: the usage route runs it on every request. */
const compiledAccountWithPeriod = new WeakMap<Executor, CompiledQuery<AccountWithPeriodRow>>();

export async function findAccountWithPeriodAt(
  db: Executor,
  accountId: string,
  at: string,
): Promise<AccountWithPeriod | undefined> {
  let compiled = compiledAccountWithPeriod.get(db);
  if (!compiled) {
    compiled = accountWithPeriodQuery(db, '', '').compile();
    compiledAccountWithPeriod.set(db, compiled);
  }
  // Parameters in the order the query binds them: the join's two bounds, then the account id.
  const result = await db.executeQuery<AccountWithPeriodRow>({
    ...compiled,
    parameters: [at, at, accountId],
  });
  const row = result.rows[0];
  if (!row) return undefined;
  const { period_start, used, overage_count, ...account } = row;
  return {
    account,
    period:
      period_start === null ? null : { period_start, used: used ?? 0, overage_count: overage_count ?? 0 },
  };
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
  key: PeriodKey & { count: number; limit: number | null; overageAllowed: boolean },
): Promise<UsagePeriodRow | undefined> {
  const { count, limit } = key;
  // No quota: every count fits, none is overage.
  if (limit === null)
    return db
      .updateTable('usage_periods')
      .set({ used: sql<number>`used + ${count}` })
      .where('account_id', '=', key.accountId)
      .where('period_start', '=', key.periodStart)
      .returningAll()
      .executeTakeFirst();
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
