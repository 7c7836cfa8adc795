/**
 * SQL for outcome sources (services/outcomes/sources.service.ts). The provider's verification key
 * is sealed here, at the boundary: callers see it in plaintext.
 */
import { sql, type Insertable } from 'kysely';
import { storeSecrets } from './backend.js';
import type { Executor } from './executor.js';
import type { OutcomeSourceRow, OutcomeSourcesTable } from './schema/outcome-sources.schema.js';

const COLUMN = 'outcome_sources.verify_key';

function opened(db: Executor, row: OutcomeSourceRow): OutcomeSourceRow {
  return row.verify_key === null
    ? row
    : { ...row, verify_key: storeSecrets(db).open(COLUMN, row.verify_key) };
}

/** Inserts a source; `row.verify_key` is given in plaintext and stored sealed. */
export async function insertOutcomeSource(db: Executor, row: Insertable<OutcomeSourcesTable>): Promise<void> {
  const verifyKey = row.verify_key ?? null;
  await db
    .insertInto('outcome_sources')
    .values({ ...row, verify_key: verifyKey === null ? null : storeSecrets(db).seal(COLUMN, verifyKey) })
    .execute();
}

export async function listOutcomeSources(db: Executor, accountId: string): Promise<OutcomeSourceRow[]> {
  const rows = await db
    .selectFrom('outcome_sources')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, verify_key: null }));
}

export async function countOutcomeSources(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('outcome_sources')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A source, with its account's suspension (null: active). */
export type OutcomeSourceWithAccount = OutcomeSourceRow & { account_suspended_at: string | null };

/** The source with its verification key opened, or undefined. */
export async function getOutcomeSource(
  db: Executor,
  id: string,
): Promise<OutcomeSourceWithAccount | undefined> {
  const row = await db
    .selectFrom('outcome_sources')
    .innerJoin('accounts', 'accounts.id', 'outcome_sources.account_id')
    .selectAll('outcome_sources')
    .select('accounts.suspended_at as account_suspended_at')
    .where('outcome_sources.id', '=', id)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { ...opened(db, row), account_suspended_at: row.account_suspended_at };
}

export async function deleteOutcomeSource(db: Executor, accountId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('outcome_sources')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Pins the SNS topic unless one is pinned; returns the topic the source accepts from now on. */
export async function pinTopicArn(db: Executor, id: string, topicArn: string): Promise<string | null> {
  await db
    .updateTable('outcome_sources')
    .set({ topic_arn: topicArn })
    .where('id', '=', id)
    .where('topic_arn', 'is', null)
    .execute();
  const row = await db
    .selectFrom('outcome_sources')
    .select('topic_arn')
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.topic_arn ?? null;
}

/** Adds a delivery's counts to the source. */
export async function countSourceEvents(
  db: Executor,
  id: string,
  counts: { taken: number; ignored: number; at: string },
): Promise<void> {
  await db
    .updateTable('outcome_sources')
    .set({
      events_taken: sql`events_taken + ${counts.taken}`,
      events_ignored: sql`events_ignored + ${counts.ignored}`,
      last_event_at: counts.at,
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Records a token the first time it is seen; the hash of the body it came with before, when it
 * was seen already (a retry brings the same body, a replay another). Expired tokens of the source
 * are dropped on the way.
 */
export async function recordNonce(
  db: Executor,
  row: { source_id: string; nonce: string; body_hash: string; expires_at: string },
  now: string,
): Promise<string | null> {
  await db
    .deleteFrom('outcome_hook_nonces')
    .where('source_id', '=', row.source_id)
    .where('expires_at', '<', now)
    .execute();
  const res = await db
    .insertInto('outcome_hook_nonces')
    .values(row)
    .onConflict((oc) => oc.columns(['source_id', 'nonce']).doNothing())
    .executeTakeFirst();
  if (Number(res.numInsertedOrUpdatedRows ?? 0n) > 0) return null;
  const seen = await db
    .selectFrom('outcome_hook_nonces')
    .select('body_hash')
    .where('source_id', '=', row.source_id)
    .where('nonce', '=', row.nonce)
    .executeTakeFirst();
  return seen?.body_hash ?? null;
}
