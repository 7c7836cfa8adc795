/** Counts for the operators' metrics (GET /metrics), read at scrape time from the shared store. */
import type { Expression, SqlBool } from 'kysely';
import type { Executor } from './executor.js';

export async function jobCountsByStatus(db: Executor): Promise<{ status: string; n: number }[]> {
  const rows = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
}

export interface ChunkCounts {
  /** Waiting for a worker (never claimed, or given back). */
  queued: number;
  /** Claimed under a lease still running. */
  leased: number;
  /** Claimed, but the lease ran out (the worker died or hangs): waiting to be taken over. */
  expired: number;
}

/** Chunks of queued and processing jobs by where they stand at `now` (ISO). */
export async function chunkCounts(db: Executor, now: string): Promise<ChunkCounts> {
  const row = await db
    .selectFrom('job_chunks')
    .innerJoin('jobs', 'jobs.id', 'job_chunks.job_id')
    .where('job_chunks.state', '=', 'pending')
    .where('jobs.status', 'in', ['queued', 'processing'])
    .select((eb) => {
      // sum(case when … then 1 else 0 end): a count of the rows matching, in one pass.
      const countWhere = (condition: Expression<SqlBool>) =>
        eb.fn.sum<number>(eb.case().when(condition).then(1).else(0).end());
      const leased = eb('job_chunks.lease_owner', 'is not', null);
      return [
        countWhere(eb('job_chunks.lease_owner', 'is', null)).as('queued'),
        countWhere(eb.and([leased, eb('job_chunks.lease_expires_at', '>', now)])).as('leased'),
        countWhere(eb.and([leased, eb('job_chunks.lease_expires_at', '<=', now)])).as('expired'),
      ];
    })
    .executeTakeFirst();
  return {
    queued: Number(row?.queued ?? 0),
    leased: Number(row?.leased ?? 0),
    expired: Number(row?.expired ?? 0),
  };
}

export async function deliveryCounts(db: Executor): Promise<{ channel: string; state: string; n: number }[]> {
  const rows = await db
    .selectFrom('job_deliveries')
    .select(['channel', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['channel', 'state'])
    .execute();
  return rows.map((r) => ({ channel: r.channel, state: r.state, n: Number(r.n) }));
}
