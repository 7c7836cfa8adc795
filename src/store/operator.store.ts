/**
 * SQL of the operator console (docs/operators.md): every account with its key and member
 * counts, and the figures of the service-health panel. Counts come back as numbers on SQLite and
 * as strings (bigint) on PostgreSQL: Number() makes them one.
 */
import type { Executor } from './executor.js';
import type { AccountRow } from './schema/accounts.schema.js';

export interface AccountWithCounts extends AccountRow {
  active_keys: number;
  members: number;
}

/** Accounts (one, with `id`), newest first, with their active keys and members (invited ones included). */
export async function listAccountsWithCounts(
  db: Executor,
  options: { limit: number; id?: string },
): Promise<AccountWithCounts[]> {
  let query = db
    .selectFrom('accounts')
    .selectAll('accounts')
    .select((eb) => [
      eb
        .selectFrom('api_keys')
        .select((k) => k.fn.countAll<number | string>().as('n'))
        .whereRef('api_keys.account_id', '=', 'accounts.id')
        .where('api_keys.revoked_at', 'is', null)
        .as('active_keys'),
      eb
        .selectFrom('members')
        .select((m) => m.fn.countAll<number | string>().as('n'))
        .whereRef('members.account_id', '=', 'accounts.id')
        .as('members'),
    ])
    .orderBy('accounts.created_at', 'desc')
    .orderBy('accounts.id')
    .limit(options.limit);
  if (options.id !== undefined) query = query.where('accounts.id', '=', options.id);
  const rows = await query.execute();
  return rows.map((r) => ({
    ...r,
    active_keys: Number(r.active_keys ?? 0),
    members: Number(r.members ?? 0),
  }));
}

/** Jobs per status, over the whole store. */
export async function countJobsByStatus(db: Executor): Promise<{ status: string; n: number }[]> {
  const rows = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .groupBy('status')
    .execute();
  return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
}

/** Pending chunks of queued and processing jobs, and how many of them wait on a suspended account. */
export async function countPendingChunks(db: Executor): Promise<{ pending: number; paused: number }> {
  const row = await db
    .selectFrom('job_chunks')
    .innerJoin('jobs', 'jobs.id', 'job_chunks.job_id')
    .innerJoin('accounts', 'accounts.id', 'jobs.account_id')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('pending'),
      eb.fn
        .sum<number | string | null>(
          eb.case().when('accounts.suspended_at', 'is not', null).then(1).else(0).end(),
        )
        .as('paused'),
    ])
    .where('job_chunks.state', '=', 'pending')
    .where('jobs.status', 'in', ['queued', 'processing'])
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), paused: Number(row.paused ?? 0) };
}

/**
 * The workers holding a chunk lease that has not expired at `now`: each one renews its leases
 * every third of the lease while it verifies, so the latest expiry tells its last heartbeat.
 */
export async function listLeaseHolders(
  db: Executor,
  now: string,
): Promise<{ worker_id: string; chunks: number; lease_expires_at: string }[]> {
  const rows = await db
    .selectFrom('job_chunks')
    .select((eb) => [
      'lease_owner',
      eb.fn.countAll<number | string>().as('chunks'),
      eb.fn.max('lease_expires_at').as('lease_expires_at'),
    ])
    .where('state', '=', 'pending')
    .where('lease_owner', 'is not', null)
    .where('lease_expires_at', '>=', now)
    .groupBy('lease_owner')
    .orderBy('lease_owner')
    .execute();
  return rows.map((r) => ({
    worker_id: r.lease_owner ?? '',
    chunks: Number(r.chunks),
    lease_expires_at: r.lease_expires_at ?? now,
  }));
}

/**
 * Webhook and e-mail deliveries in trouble: given up (failed) since `since`, and retrying now
 * (pending after a failed attempt), with the latest error seen among them.
 */
export async function countFailingDeliveries(
  db: Executor,
  since: string,
): Promise<{ failed: number; retrying: number; last_error: string | null; last_at: string | null }> {
  const failed = await db
    .selectFrom('job_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('state', '=', 'failed')
    .where('finished_at', '>=', since)
    .executeTakeFirstOrThrow();
  const retrying = await db
    .selectFrom('job_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('state', '=', 'pending')
    .where('attempts', '>', 0)
    .executeTakeFirstOrThrow();
  const last = await db
    .selectFrom('job_deliveries')
    .select(['last_error', 'created_at', 'finished_at'])
    .where('last_error', 'is not', null)
    .where((eb) => eb.or([eb('state', '=', 'pending'), eb('finished_at', '>=', since)]))
    .where('state', 'in', ['pending', 'failed'])
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    failed: Number(failed.n),
    retrying: Number(retrying.n),
    last_error: last?.last_error ?? null,
    last_at: last ? (last.finished_at ?? last.created_at) : null,
  };
}
