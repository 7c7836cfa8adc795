/**
 * The service-health panel of the operator console (docs/operators.md): jobs by state, pending
 * chunks (and how many wait on a suspended account), the live worker processes (idle or busy)
 * with their last heartbeat and the ones lost lately, deliveries failing, and the egresses'
 * health from the reputation guard, and whether the DNS resolver is trusted.
 */
import type { Clock } from '../../clock.js';
import type { ResolverTrustStatus } from '../../engine/dns/resolver-trust.js';
import type { EgressStatus } from '../../engine/egress/egress-guard.js';
import {
  countFailingDeliveries,
  countJobsByStatus,
  countPendingChunks,
  listLeaseHolders,
} from '../../store/operator.store.js';
import type { WorkerKind } from '../../store/schema/worker.schema.js';
import { countLostWorkers, knownWorkerIds, listLiveWorkers } from '../../store/worker.store.js';
import { WORKER_ROWS_KEPT_MS } from '../batches/retention.service.js';
import type { Executor } from '../../store/executor.js';
import { JOB_STATUSES, type JobStatus } from '../../store/schema/jobs.schema.js';

/** How far back given-up deliveries count as failing. */
export const FAILING_DELIVERIES_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface ServiceHealth {
  checked_at: string;
  jobs: Record<JobStatus, number>;
  chunks: { pending: number; paused: number };
  workers: {
    /**
     * Worker processes that beat within the lease (three beats: jobs/worker-presence.ts), idle
     * (`chunks` 0) or busy, plus any lease holder without a row (a worker of an older version:
     * its kind, host, pid, start and chunks done unknown, its heartbeat its latest lease renewal).
     */
    live: LiveWorker[];
    /** Workers that stopped beating without a clean stop within the last 24 hours. */
    lost_24h: number;
  };
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
  /** Whether this process's DNS resolver tells the truth (engine/dns/resolver-trust.ts). */
  dns_resolver: DnsResolverHealth;
}

export interface DnsResolverHealth {
  /** true while trusted or with the checks off: NXDOMAIN answers are believed. */
  trusted: boolean;
  state: string;
  reason: string | null;
  checked_at: string | null;
}

/** The resolver's trust as the console and the dashboard's banner show it. */
export function dnsResolverHealth(status: ResolverTrustStatus): DnsResolverHealth {
  return {
    trusted: status.state === 'trusted' || status.state === 'off',
    state: status.state,
    reason: status.reason,
    checked_at: status.checkedAt === null ? null : new Date(status.checkedAt).toISOString(),
  };
}

export interface LiveWorker {
  worker_id: string;
  kind: WorkerKind | null;
  host: string | null;
  pid: number | null;
  version: string | null;
  started_at: string | null;
  last_heartbeat: string;
  /** Chunks it holds a lease on now. */
  chunks: number;
  /**
   * Chunks it finished (completed, or settled by failing their job) since it started, as of its
   * last heartbeat; null for a lease holder without a row.
   */
  chunks_done: number | null;
}

export interface ServiceHealthDeps {
  db: Executor;
  clock: Clock;
  /** The lease of a chunk (config.batch.leaseMs). */
  leaseMs: number;
  /** The guard's view of the egresses (runtime.guard.statuses()); absent: not known here. */
  egressStatuses?: () => readonly EgressStatus[];
  /** The resolver's trust (AppContext.dnsTrust.status). */
  dnsTrust: () => ResolverTrustStatus;
}

export async function serviceHealth(deps: ServiceHealthDeps): Promise<ServiceHealth> {
  const now = deps.clock.now();
  const jobs = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const { status, n } of await countJobsByStatus(deps.db))
    if ((JOB_STATUSES as readonly string[]).includes(status)) jobs[status as JobStatus] = n;
  const liveSince = new Date(now.getTime() - deps.leaseMs).toISOString();
  const holders = await listLeaseHolders(deps.db, now.toISOString());
  const held = new Map(holders.map((h) => [h.worker_id, h]));
  const live: LiveWorker[] = (await listLiveWorkers(deps.db, liveSince)).map((w) => ({
    worker_id: w.id,
    kind: w.kind,
    host: w.host,
    pid: w.pid,
    version: w.version,
    started_at: w.started_at,
    last_heartbeat: w.last_heartbeat_at,
    chunks: held.get(w.id)?.chunks ?? 0,
    chunks_done: w.chunks_done,
  }));
  // A lease holder with a row that is not live is a lost worker whose last lease has not run out
  // yet: counted lost, not listed again.
  const known = await knownWorkerIds(
    deps.db,
    holders.map((h) => h.worker_id),
  );
  for (const h of holders)
    if (!known.has(h.worker_id))
      live.push({
        worker_id: h.worker_id,
        kind: null,
        host: null,
        pid: null,
        version: null,
        started_at: null,
        last_heartbeat: new Date(new Date(h.lease_expires_at).getTime() - deps.leaseMs).toISOString(),
        chunks: h.chunks,
        chunks_done: null,
      });
  const lostSince = new Date(now.getTime() - WORKER_ROWS_KEPT_MS).toISOString();
  const since = new Date(now.getTime() - FAILING_DELIVERIES_WINDOW_MS).toISOString();
  const deliveries = await countFailingDeliveries(deps.db, since);
  return {
    checked_at: now.toISOString(),
    jobs,
    chunks: await countPendingChunks(deps.db),
    workers: { live, lost_24h: await countLostWorkers(deps.db, lostSince, liveSince) },
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
    dns_resolver: dnsResolverHealth(deps.dnsTrust()),
  };
}
