/**
 * What an operator watches of batch jobs, on the app's Prometheus registry (GET /metrics).
 *
 * Gauges read from the store at scrape time (jobs by state, chunks queued / leased / with an
 * expired lease, deliveries by outcome) describe every process sharing the store. Counters and
 * the per-host session gauge are this process's own (its embedded workers): a standalone
 * `mailverdict worker` process keeps them too, but has no /metrics of its own, so its work shows
 * in the store gauges only (docs/api.md#metrics).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { BatchEngineObserver } from '../engine/batch/types.js';
import type { AppContext } from '../context.js';
import { createJobStats } from '../services/batches/job-stats.service.js';

export interface JobMetrics {
  /** Called by the worker when a chunk's results are stored. */
  chunkVerified(addresses: number): void;
  /** Called by the worker when it claims a chunk another worker had claimed before. */
  chunkTakenOver(): void;
  /** Called by the delivery runner after each attempt. */
  deliveryAttempted(channel: string, outcome: 'delivered' | 'skipped' | 'retry' | 'failed'): void;
  /** Feeds the SMTP session gauge and the given-up counter from the batch engine. */
  engineObserver: BatchEngineObserver;
}

const JOB_STATES = ['queued', 'processing', 'completed', 'failed'] as const;

export function createJobMetrics(registry: Registry, db: AppContext['db'], clock: Clock): JobMetrics {
  const stats = createJobStats(db, clock);
  new Gauge({
    name: 'mailverdict_jobs',
    help: 'Batch jobs kept in the store, by status.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = new Map((await stats.jobsByStatus()).map((r) => [r.status, r.n]));
      for (const status of JOB_STATES) this.set({ status }, counts.get(status) ?? 0);
    },
  });
  new Gauge({
    name: 'mailverdict_job_chunks',
    help: 'Chunks of running jobs: queued (no worker), leased (a worker holds them), expired (the lease ran out; waiting to be taken over).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const c = await stats.chunks();
      this.set({ state: 'queued' }, c.queued);
      this.set({ state: 'leased' }, c.leased);
      this.set({ state: 'expired' }, c.expired);
    },
  });
  new Gauge({
    name: 'mailverdict_job_deliveries',
    help: 'Webhook and e-mail notifications of jobs in the store, by channel and state (pending, delivered, skipped, failed).',
    labelNames: ['channel', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await stats.deliveries()) this.set({ channel: r.channel, state: r.state }, r.n);
    },
  });
  const verified = new Counter({
    name: 'mailverdict_batch_addresses_verified_total',
    help: "Addresses of batch jobs verified by this process's workers (rate() gives addresses per second).",
    registers: [registry],
  });
  const takeovers = new Counter({
    name: 'mailverdict_chunk_lease_takeovers_total',
    help: "Chunks this process's workers claimed after another claim had ended without results (a lease expiry or a hand-back).",
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'mailverdict_delivery_attempts_total',
    help: 'Webhook and e-mail delivery attempts by this process, by channel and outcome.',
    labelNames: ['channel', 'outcome'],
    registers: [registry],
  });
  const sessions = new Gauge({
    name: 'mailverdict_smtp_sessions_open',
    help: "SMTP sessions this process's batch engine holds open, per MX host address and egress.",
    labelNames: ['host', 'egress'],
    registers: [registry],
  });
  // Labels of bounded sets only (a failure kind, a dialogue stage): the host itself is in the log
  // line the engine writes, since a label per MX host would grow without bound.
  const givenUp = new Counter({
    name: 'mailverdict_smtp_hosts_given_up_total',
    help: 'Times the batch engine gave up on an MX host and settled its addresses as unknown, by failure kind (unavailable, timeout, blocked, greylisted) and the dialogue stage it failed at.',
    labelNames: ['reason', 'stage'],
    registers: [registry],
  });
  const givenUpAddresses = new Counter({
    name: 'mailverdict_smtp_given_up_addresses_total',
    help: 'Addresses the batch engine settled as unknown by giving up their MX host.',
    registers: [registry],
  });
  // Per-host series exist only while sessions are open, so the label set stays bounded.
  const open = new Map<string, number>();
  return {
    chunkVerified: (n) => verified.inc(n),
    chunkTakenOver: () => takeovers.inc(),
    deliveryAttempted: (channel, outcome) => attempts.inc({ channel, outcome }),
    engineObserver: {
      onSessionOpen(host, egress) {
        const key = `${host}|${egress}`;
        open.set(key, (open.get(key) ?? 0) + 1);
        sessions.set({ host, egress }, open.get(key)!);
      },
      onSessionClose(host, egress) {
        const key = `${host}|${egress}`;
        const left = Math.max(0, (open.get(key) ?? 1) - 1);
        if (left === 0) {
          open.delete(key);
          sessions.remove({ host, egress });
        } else {
          open.set(key, left);
          sessions.set({ host, egress }, left);
        }
      },
      onHostGivenUp(_host, _egress, reason, details) {
        givenUp.inc({ reason, stage: details?.stage ?? 'unknown' });
        if (details !== undefined) givenUpAddresses.inc(details.addresses);
      },
    },
  };
}
