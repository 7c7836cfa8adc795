/**
 * SQL for the verdict log (migration 0021; services/outcomes/verdict-log.ts): the latest verdict
 * per (account, address) written in batches, erased by address or by age, and the report's one
 * read, which joins it to the delivery outcomes that came after each verdict.
 */
import { sql, type Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { VerdictLogTable } from './schema/outcomes.schema.js';

/** Rows per INSERT: 8 bound values each keeps a statement far below SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 500;

/**
 * Writes the latest verdict of each row's (account, address). A row older than the one held is
 * ignored (two processes flushing out of order); the same status and reason as the one held keep
 * its `since`. `rows` must not name an (account, address) twice.
 */
export async function upsertVerdicts(
  db: Executor,
  rows: readonly Insertable<VerdictLogTable>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await db
      .insertInto('verdict_log')
      .values(rows.slice(i, i + ROWS_PER_INSERT))
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'address_key'])
          .doUpdateSet({
            status: (eb) => eb.ref('excluded.status'),
            reason: (eb) => eb.ref('excluded.reason'),
            score: (eb) => eb.ref('excluded.score'),
            provider: (eb) => eb.ref('excluded.provider'),
            verified_at: (eb) => eb.ref('excluded.verified_at'),
            since: sql<string>`case when verdict_log.status = excluded.status and verdict_log.reason = excluded.reason then verdict_log.since else excluded.since end`,
          })
          .where(sql<boolean>`excluded.verified_at >= verdict_log.verified_at`),
      )
      .execute();
  }
}

/** Erases an address's verdict in the account; returns how many rows (0 or 1). */
export async function deleteVerdictOfAddress(
  db: Executor,
  accountId: string,
  addressKey: string,
): Promise<number> {
  const res = await db
    .deleteFrom('verdict_log')
    .where('account_id', '=', accountId)
    .where('address_key', '=', addressKey)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The retention: deletes every verdict last given before `before` (ISO). */
export async function deleteVerdictsBefore(db: Executor, before: string): Promise<number> {
  const res = await db.deleteFrom('verdict_log').where('verified_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The addresses of one (status, reason, provider, score) verified in the period, and what became of them. */
export interface VerdictOutcomeRow {
  status: string;
  /** '' for none. */
  reason: string;
  /** '' for none. */
  provider: string;
  score: number;
  /** Addresses given this verdict (last given in the period). */
  verified: number;
  /** Of those, addresses with any outcome after the verdict: they were sent to. */
  sent: number;
  /** Of those, addresses with a hard bounce after the verdict. */
  bounced: number;
  /** Of those sent to, addresses with a proof of delivery after the verdict and no hard bounce. */
  delivered: number;
}

/**
 * The verdicts last given in [from, to] with the outcomes after each (`at` later than its `since`),
 * counted per address and grouped by (status, reason, provider, score): one read on the
 * (account, verified_at) index and the outcomes' (account, address) index. `accountId` null:
 * every account (each verdict still meets only its own account's outcomes).
 */
export async function verdictOutcomes(
  db: Executor,
  period: { accountId: string | null; from: string; to: string },
): Promise<VerdictOutcomeRow[]> {
  const account = period.accountId === null ? sql`` : sql`and v.account_id = ${period.accountId}`;
  const { rows } = await sql<Record<keyof VerdictOutcomeRow, string | number>>`
    select status, reason, provider, score,
      count(*) as verified,
      sum(sent) as sent,
      sum(bounced) as bounced,
      sum(case when bounced = 0 and proof = 1 then 1 else 0 end) as delivered
    from (
      select v.account_id, v.address_key, v.status, v.reason, v.provider, v.score,
        max(case when e.type is null then 0 else 1 end) as sent,
        max(case when e.type = 'hard_bounce' then 1 else 0 end) as bounced,
        max(case when e.type in ('delivered', 'opened', 'clicked') then 1 else 0 end) as proof
      from verdict_log v
      left join outcome_events e
        on e.account_id = v.account_id and e.address_key = v.address_key and e.at > v.since
      where v.verified_at >= ${period.from} and v.verified_at <= ${period.to} ${account}
      group by v.account_id, v.address_key, v.status, v.reason, v.provider, v.score
    ) per_address
    group by status, reason, provider, score
    order by status, reason, provider, score
  `.execute(db);
  return rows.map((r) => ({
    status: String(r.status),
    reason: String(r.reason),
    provider: String(r.provider),
    score: Number(r.score),
    verified: Number(r.verified),
    sent: Number(r.sent),
    bounced: Number(r.bounced),
    delivered: Number(r.delivered),
  }));
}
