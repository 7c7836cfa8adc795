/**
 * SQL for delivery outcomes (services/outcomes/). Events are inserted (a repeat of one already
 * held is skipped by the unique index), read as the latest event of each type per address, and
 * deleted by address (erasure) or by age (retention).
 */
import { sql, type Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { OutcomeEventsTable } from './schema/outcomes.schema.js';

/** Rows per INSERT: 10 bound values each keeps a statement far below SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 500;

/** Inserts `rows`, skipping any already held (same account, address, type, time and source id); returns how many were new. */
export async function insertOutcomeEvents(
  db: Executor,
  rows: readonly Insertable<OutcomeEventsTable>[],
): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const res = await db
      .insertInto('outcome_events')
      .values(rows.slice(i, i + ROWS_PER_INSERT))
      .onConflict((oc) => oc.columns(['account_id', 'address_key', 'type', 'at', 'source_id']).doNothing())
      .executeTakeFirst();
    inserted += Number(res.numInsertedOrUpdatedRows ?? 0n);
  }
  return inserted;
}

/** The latest event of one type for one address. */
export interface LatestOutcome {
  address_key: string;
  type: string;
  at: string;
  source: string;
  detail: string | null;
}

/**
 * The latest event of each type for each of `addressKeys`, in one read on the identity index
 * (account, address, type, at): a window per (address, type), newest first.
 */
export async function latestOutcomes(
  db: Executor,
  accountId: string,
  addressKeys: readonly string[],
): Promise<LatestOutcome[]> {
  if (addressKeys.length === 0) return [];
  const ranked = db
    .selectFrom('outcome_events')
    .select([
      'address_key',
      'type',
      'at',
      'source',
      'detail',
      sql<number>`row_number() over (partition by address_key, type order by at desc, id desc)`.as('rank'),
    ])
    .where('account_id', '=', accountId)
    .where('address_key', 'in', [...addressKeys]);
  return db
    .selectFrom(ranked.as('ranked'))
    .select(['address_key', 'type', 'at', 'source', 'detail'])
    .where('rank', '=', 1)
    .execute();
}

/** Erases an address's events in the account; returns how many. */
export async function deleteOutcomesOfAddress(
  db: Executor,
  accountId: string,
  addressKey: string,
): Promise<number> {
  const res = await db
    .deleteFrom('outcome_events')
    .where('account_id', '=', accountId)
    .where('address_key', '=', addressKey)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The retention: deletes every event that happened before `before` (ISO). */
export async function deleteOutcomesBefore(db: Executor, before: string): Promise<number> {
  const res = await db.deleteFrom('outcome_events').where('at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deliveries and hard bounces the account recorded at each of `domains`. */
export interface DomainOutcomeCounts {
  domain: string;
  delivered: number;
  hardBounces: number;
}

/** One read on the (account, domain, type) index. Domains without events are left out. */
export async function domainOutcomeCounts(
  db: Executor,
  accountId: string,
  domains: readonly string[],
): Promise<DomainOutcomeCounts[]> {
  if (domains.length === 0) return [];
  const rows = await db
    .selectFrom('outcome_events')
    .select(['domain', 'type', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('account_id', '=', accountId)
    .where('domain', 'in', [...domains])
    .where('type', 'in', ['delivered', 'hard_bounce'])
    .groupBy(['domain', 'type'])
    .execute();
  const out = new Map<string, DomainOutcomeCounts>();
  for (const row of rows) {
    const entry = out.get(row.domain) ?? { domain: row.domain, delivered: 0, hardBounces: 0 };
    if (row.type === 'delivered') entry.delivered = Number(row.n);
    else entry.hardBounces = Number(row.n);
    out.set(row.domain, entry);
  }
  return [...out.values()];
}

/** Events that came in on one day (UTC, by `created_at`) from one source, of one type. */
export interface IntakeCount {
  day: string;
  source: string;
  type: string;
  count: number;
}

/** What the account took in since `since` (ISO), counted per day of intake, source and type. */
export async function intakeCounts(db: Executor, accountId: string, since: string): Promise<IntakeCount[]> {
  const day = sql<string>`substr(created_at, 1, 10)`;
  const rows = await db
    .selectFrom('outcome_events')
    .select([day.as('day'), 'source', 'type', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', since)
    .groupBy([day, 'source', 'type'])
    .execute();
  return rows.map((r) => ({ day: r.day, source: r.source, type: r.type, count: Number(r.n) }));
}
