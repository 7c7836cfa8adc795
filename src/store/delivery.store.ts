/**
 * The durable outbox of job events (webhook calls and notification e-mails) and the record of
 * every attempt. A delivery is claimed with a lease like a chunk, so two processes never send
 * the same attempt, and one that dies mid-send leaves it to be retried.
 */
import type { Insertable } from 'kysely';
import { storeSecrets } from './backend.js';
import type { Executor as Db } from './executor.js';
import type { DeliveryRow, JobDeliveriesTable, JobDeliveryAttemptsTable } from './schema/jobs.schema.js';

export async function insertDelivery(db: Db, row: Insertable<JobDeliveriesTable>): Promise<void> {
  await db.insertInto('job_deliveries').values(row).execute();
}

/** Ids of pending deliveries whose next attempt is due and that nobody holds. */
export async function findDueDeliveries(db: Db, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('job_deliveries')
    .select('id')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Takes the delivery for one attempt (attempts counted); undefined when someone else took it. */
export async function claimDelivery(
  db: Db,
  id: string,
  owner: string,
  now: string,
  expiresAt: string,
): Promise<DeliveryRow | undefined> {
  return db
    .updateTable('job_deliveries')
    .set((eb) => ({ lease_owner: owner, lease_expires_at: expiresAt, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<', now)]))
    .returningAll()
    .executeTakeFirst();
}

export async function recordDeliveryAttempt(db: Db, row: JobDeliveryAttemptsTable): Promise<void> {
  await db
    .insertInto('job_delivery_attempts')
    .values(row)
    .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
    .execute();
}

/** Ends or reschedules the attempt the owner holds: `state` pending with `nextAttemptAt` to retry. */
export async function settleDelivery(
  db: Db,
  id: string,
  owner: string,
  outcome: {
    state: JobDeliveriesTable['state'];
    nextAttemptAt?: string;
    statusCode: number | null;
    error: string | null;
    finishedAt: string | null;
  },
): Promise<void> {
  await db
    .updateTable('job_deliveries')
    .set({
      state: outcome.state,
      ...(outcome.nextAttemptAt !== undefined ? { next_attempt_at: outcome.nextAttemptAt } : {}),
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      finished_at: outcome.finishedAt,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

export async function listJobDeliveries(db: Db, jobId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('job_deliveries')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('created_at')
    .execute();
}

export async function listDeliveryAttempts(db: Db, deliveryId: string): Promise<JobDeliveryAttemptsTable[]> {
  return db
    .selectFrom('job_delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();
}

/**
 * The account's webhook secret, created on first use (the conditional UPDATE makes the first
 * writer win); sealed in its column (store/secret-box.ts).
 */
export async function getOrCreateWebhookSecret(
  db: Db,
  accountId: string,
  fresh: string,
): Promise<string | null> {
  await db
    .updateTable('accounts')
    .set({ webhook_secret: storeSecrets(db).seal('accounts.webhook_secret', fresh) })
    .where('id', '=', accountId)
    .where('webhook_secret', 'is', null)
    .execute();
  const row = await db
    .selectFrom('accounts')
    .select('webhook_secret')
    .where('id', '=', accountId)
    .executeTakeFirst();
  const stored = row?.webhook_secret ?? null;
  return stored === null ? null : storeSecrets(db).open('accounts.webhook_secret', stored);
}

export async function getAccountEmail(db: Db, accountId: string): Promise<string | undefined> {
  const row = await db.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirst();
  return row?.email;
}
