/**
 * What operators watch of batch jobs, read from the shared store at scrape time
 * (jobs/job-metrics.ts turns it into Prometheus gauges): it describes every process on the store.
 */
import type { Clock } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import {
  chunkCounts,
  deliveryCounts,
  jobCountsByStatus,
  type ChunkCounts,
} from '../../store/job-stats.store.js';

export type { ChunkCounts };

export interface JobStats {
  jobsByStatus: () => Promise<{ status: string; n: number }[]>;
  /** Chunks of running jobs, queued / leased / with an expired lease, now. */
  chunks: () => Promise<ChunkCounts>;
  deliveries: () => Promise<{ channel: string; state: string; n: number }[]>;
}

export function createJobStats(db: Executor, clock: Clock): JobStats {
  return {
    jobsByStatus: () => jobCountsByStatus(db),
    chunks: () => chunkCounts(db, clock.now().toISOString()),
    deliveries: () => deliveryCounts(db),
  };
}
