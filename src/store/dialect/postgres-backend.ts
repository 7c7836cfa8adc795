/**
 * PostgreSQL's store backend operations (store/backend.ts), which must hold with many processes
 * on one database under READ COMMITTED. The change watch and work watch ride on the listening
 * connection of postgres-notifications.ts.
 */
import { sql } from 'kysely';
import type { StoreBackend } from '../backend.js';
import type { Executor } from '../executor.js';
import { insertKeyIfBelow } from '../key.store.js';
import type { ChunkRow } from '../schema/jobs.schema.js';
import type { PostgresNotifications } from './postgres-notifications.js';

export function postgresBackend(notifications: PostgresNotifications): StoreBackend {
  return Object.freeze({
    name: 'postgres' as const,
    async migrationSchema(db) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      return rows[0]?.schema;
    },
    async migrationsRun(db) {
      // to_regclass: null when the table is not there, where a select would fail the statement.
      const { rows } = await sql<{ schema: string; present: boolean }>`
        select current_schema() as schema,
               to_regclass(quote_ident(current_schema()) || '.kysely_migration') is not null as present`.execute(
        db,
      );
      const here = rows[0];
      if (here?.present !== true) return null;
      const names = await sql<{ name: string }>`
        select name from ${sql.id(here.schema, 'kysely_migration')}`.execute(db);
      return names.rows.map((r) => r.name);
    },
    changes: notifications.changes,
    onWork: (listener) => notifications.onWork(listener),
    claimChunk,
    insertKeyWithinLimit: async (trx, row, maxActive) => {
      // The lock lasts until the caller's transaction ends; outside one it would guard nothing.
      if (!trx.isTransaction) throw new Error('insertKeyWithinLimit runs in a transaction on PostgreSQL');
      // Under READ COMMITTED two INSERT ... SELECT count(*) could both count 9; holding the
      // account row serialises the key creations of one account, and only those.
      await trx.selectFrom('accounts').select('id').where('id', '=', row.account_id).forUpdate().execute();
      return insertKeyIfBelow(trx, row, maxActive);
    },
  } satisfies StoreBackend);
}

/**
 * One statement per claim, the way graphile-worker and River claim: the candidate is locked with
 * FOR UPDATE SKIP LOCKED, so competing workers each take a different row instead of waiting on,
 * or racing for, the same one. Jobs are taken in order (fewest chunks done, then oldest) and each
 * one's first free chunk is found through the partial index of pending chunks (migration 0004);
 * the first job with one ends the search. Jobs of a suspended account are not candidates. Ordering all pending chunks of all jobs instead scanned
 * and sorted every one of them per claim (20,000 queued: about 9 ms a claim, bench:scale).
 */
async function claimChunk(
  db: Executor,
  claim: Parameters<StoreBackend['claimChunk']>[1],
): Promise<ChunkRow | undefined> {
  const inFlight = [...claim.inFlight.keys()].map((key) => key.split('/'));
  const result = await sql<ChunkRow>`
    update job_chunks c
    set lease_owner = ${claim.owner}, lease_expires_at = ${claim.expiresAt}, attempts = c.attempts + 1
    from (
      select pick.job_id, pick.seq
      from (
        select jobs.id from jobs
        join accounts on accounts.id = jobs.account_id
        where jobs.status in ('queued', 'processing') and accounts.suspended_at is null
        order by jobs.chunks_done, jobs.created_at, jobs.id
      ) j
      cross join lateral (
        select jc.job_id, jc.seq
        from job_chunks jc
        where jc.job_id = j.id
          and jc.state = 'pending'
          and (jc.lease_owner is null or jc.lease_expires_at < ${claim.now})
          and (jc.job_id, jc.seq) not in (
            select * from unnest(${inFlight.map((k) => k[0]!)}::text[], ${inFlight.map((k) => Number(k[1]))}::int[])
          )
        order by jc.seq
        limit 1
        for update skip locked
      ) pick
      limit 1
    ) pick
    where c.job_id = pick.job_id and c.seq = pick.seq
    returning c.*`.execute(db);
  return result.rows[0];
}
