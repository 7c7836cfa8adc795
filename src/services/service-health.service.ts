/**
 * The service-health panel of the operator console (docs/operators.md): jobs by state, pending
 * chunks (and how many wait on a suspended account), the workers holding chunk leases with their
 * last heartbeat, deliveries failing, and the egresses' health from the reputation guard.
 */
import type { Clock } from '../clock.js';
import type { EgressStatus } from '../engine/net/egress-guard.js';
import {
  countFailingDeliveries,
  countJobsByStatus,
  countPendingChunks,
  listLeaseHolders,
} from '../store/operator.store.js';
import type { Executor } from '../store/executor.js';
import { JOB_STATUSES, type JobStatus } from '../store/schema/jobs.schema.js';

/** How far back given-up deliveries count as failing. */
export const FAILING_DELIVERIES_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface ServiceHealth {
  checked_at: string;
  jobs: Record<JobStatus, number>;
  chunks: { pending: number; paused: number };
  /**
   * Workers verifying now: each renews its leases every third of the lease, so its last
   * heartbeat is its latest lease expiry less the lease. An idle worker holds none and is not
   * listed (workers keep no other record in the store).
   */
  workers: { worker_id: string; chunks: number; last_heartbeat: string }[];
  deliveries: { failed_24h: number; retrying: number; last_error: string | null; last_at: string | null };
  /** Null when this process has no reputation guard to ask. */
  egresses:
    | {
        egress: string;
        state: string;
        since: string | null;
        reason: string | null;
      }[]
    | null;
}

export interface ServiceHealthDeps {
  db: Executor;
  clock: Clock;
  /** The lease of a chunk (config.batch.leaseMs). */
  leaseMs: number;
  /** The guard's view of the egresses (runtime.guard.statuses()); absent: not known here. */
  egressStatuses?: () => readonly EgressStatus[];
}

export async function serviceHealth(deps: ServiceHealthDeps): Promise<ServiceHealth> {
  const now = deps.clock.now();
  const jobs = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const { status, n } of await countJobsByStatus(deps.db))
    if ((JOB_STATUSES as readonly string[]).includes(status)) jobs[status as JobStatus] = n;
  const holders = await listLeaseHolders(deps.db, now.toISOString());
  const since = new Date(now.getTime() - FAILING_DELIVERIES_WINDOW_MS).toISOString();
  const deliveries = await countFailingDeliveries(deps.db, since);
  return {
    checked_at: now.toISOString(),
    jobs,
    chunks: await countPendingChunks(deps.db),
    workers: holders.map((h) => ({
      worker_id: h.worker_id,
      chunks: h.chunks,
      last_heartbeat: new Date(new Date(h.lease_expires_at).getTime() - deps.leaseMs).toISOString(),
    })),
    deliveries: {
      failed_24h: deliveries.failed,
      retrying: deliveries.retrying,
      last_error: deliveries.last_error,
      last_at: deliveries.last_at,
    },
    egresses:
      deps.egressStatuses === undefined
        ? null
        : deps.egressStatuses().map((e) => ({
            egress: e.egress,
            state: e.state,
            since: e.since === null ? null : new Date(e.since).toISOString(),
            reason: e.reason,
          })),
  };
}
