/**
 * The batch engine: many addresses at once, fast and polite. Addresses are deduplicated and
 * grouped by domain (one DNS answer and one catch-all probe per domain), then by MX host, where
 * pooled SMTP sessions carry many recipients each (see pooled-session.ts) under a global and a
 * per-host cap, with back-off for hosts that answer 421 or time out and later tries for
 * greylisted recipients. docs/batch-engine.md explains the design and its measured defaults.
 * Given a coordination, the per-host caps, back-off, catch-all and negative DNS answers and the
 * greylist retry schedule are shared with every engine on it (other worker processes, through
 * Redis).
 *
 * `mode: 'per-address'` opens one fresh connection per address (full dialogue, no PIPELINING)
 * under the same caps: the benchmark's baseline.
 */
import type { Clock } from '../../clock.js';
import { SECOND, systemClock } from '../../clock.js';
import { MailHostResolver } from '../dns/resolver.js';
import type { ResolverTrust } from '../dns/resolver-trust.js';
import { DEFAULT_EGRESS_REST_MS, buildEgresses, type EgressGate } from '../egress/egress.js';
import { MAX_REJECTS_PER_SESSION } from '../sessions/warm-pool.js';
import type { VerificationResult } from '../types.js';
import { MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from '../types.js';
import { BatchRun } from './batch-run.js';
import { BackgroundTasks } from '../background.js';
import { CatchAllTracker, type SharedCatchAll } from './catch-all.js';
import { runBorrowedGroup, runPooledSession } from './pooled-session.js';
import { ProbeScheduler } from './scheduler.js';
import type { IdleSession, SessionBroker } from '../sessions/broker.js';
import type { Lane } from './host-queue.js';
import { withSharedNegativeAnswers, type NegativeDnsOutcome } from './shared-dns.js';
import { SharedGreylistSchedule } from './shared-greylist.js';
import type { EngineCoordination } from '../coordination.js';
import { DEFAULT_HOST_BACKOFF_MAX_MS, DEFAULT_HOST_BACKOFF_MS } from '../coordination.js';
import type { BatchEngine, BatchEngineObserver, BatchEngineOptions, VerifyManyOptions } from './types.js';
import { DEFAULT_PROVIDER_CONCURRENCY, DEFAULT_PROVIDER_SESSIONS_PER_SECOND } from './types.js';
import { HeldReplies } from '../smtp/held-replies.js';

export interface BatchEngineDeps {
  clock?: Clock;
  /** In [0, 1): MX shuffling, catch-all local parts, proxy picks. */
  random?: () => number;
  logger?: { warn(obj: object, msg?: string): void };
  /**
   * What this engine shares with other engines: per-host session slots and back-off, catch-all
   * answers, negative DNS answers and greylisted addresses' next tries. The scale-out mode passes
   * a Redis-backed one, so that every worker's sessions count against one per-host cap. Absent:
   * the engine's caps and caches are its own. The caller closes it, after the engine.
   */
  coordination?: EngineCoordination;
  /** Told about sessions and hosts given up on, for metrics (`/metrics`) and job views. */
  observer?: BatchEngineObserver;
  /** The reputation guard (../egress/egress-guard.ts): resting egresses open no new sessions. */
  guard?: EgressGate;
  /**
   * The process's session broker (../sessions/broker.ts; the one that runtime.ts gives the
   * verifier too): one per-host and per-provider cap with the single verifications, and the idle
   * sessions of both kinds. Absent: its caps are its own and its sessions are never kept idle.
   */
  broker?: SessionBroker;
  /**
   * Whether the resolver tells the truth (dns/resolver-trust.ts): while it is not trusted, NXDOMAIN
   * and "no mail host" answers settle as unknown / dns_error and are shared with no other engine.
   */
  trust?: ResolverTrust;
}

/** Tuning defaults; docs/batch-engine.md gives the reasons and the measurements behind them. */
export const BATCH_DEFAULTS = {
  pipelineDepth: 32,
  recipientsPerTransaction: 500,
  recipientsPerSession: 500,
  maxRejectsPerSession: MAX_REJECTS_PER_SESSION,
  hostBackoffMs: DEFAULT_HOST_BACKOFF_MS,
  hostBackoffMaxMs: DEFAULT_HOST_BACKOFF_MAX_MS,
  maxHostFailures: 3,
  itemsPerSession: 50,
  maxDrops: 2,
  sessionLeaseMs: 15_000,
  egressRestMs: DEFAULT_EGRESS_REST_MS,
  providerConcurrency: DEFAULT_PROVIDER_CONCURRENCY,
  providerSessionsPerSecond: DEFAULT_PROVIDER_SESSIONS_PER_SECOND,
} as const;

/** Between two log lines about a failing shared coordination. */
const COORDINATION_WARN_INTERVAL_MS = 10 * SECOND;

/** Builds a batch engine; `close()` ends its sessions and releases its sockets and timers. */
export function createBatchEngine(options: BatchEngineOptions, deps: BatchEngineDeps = {}): BatchEngine {
  const clock = deps.clock ?? systemClock;
  const now = (): number => clock.now().getTime();
  const random = deps.random ?? Math.random;
  const pooled = (options.mode ?? 'pooled') === 'pooled';
  const broker = deps.broker;
  // One memory of the hosts holding their reply behind TLS tickets: the broker's (the single
  // verifications' too) when there is one.
  const heldReplies = broker?.heldReplies ?? new HeldReplies(now);
  const timeoutMs = Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(options.timeoutMs)));
  const tuning = { ...BATCH_DEFAULTS, ...definedOnly(options) };

  // A coordination that is down fails every call of every session: one log line per interval.
  let coordinationFailures = 0;
  let coordinationWarnedAt = -Infinity;
  const coordinationFailed = (error: unknown, operation: string): void => {
    coordinationFailures += 1;
    if (now() - coordinationWarnedAt < COORDINATION_WARN_INTERVAL_MS) return;
    coordinationWarnedAt = now();
    deps.logger?.warn(
      { err: error, operation, failures: coordinationFailures },
      'shared coordination unavailable: sessions wait for their slots, caches miss',
    );
    coordinationFailures = 0;
  };
  const coordination = deps.coordination ?? null;
  // Shared-cache writes in flight, awaited by close().
  const background = new BackgroundTasks(coordinationFailed);

  const resolver = new MailHostResolver(options.dns, {
    clock: now,
    random,
    ...(deps.trust === undefined ? {} : { trust: deps.trust }),
  });
  const resolve =
    coordination === null
      ? (domain: string) => resolver.resolve(domain)
      : withSharedNegativeAnswers((domain) => resolver.resolve(domain), {
          cache: coordination.cache<NegativeDnsOutcome>('dns-negative'),
          negativeTtlMs: options.dns.negativeTtlMs,
          background,
          failed: coordinationFailed,
        });
  const catchAll = new CatchAllTracker(
    options.catchAllTtlMs,
    now,
    coordination === null
      ? null
      : { cache: coordination.cache<SharedCatchAll>('catch-all'), background, failed: coordinationFailed },
  );
  const greylist =
    coordination === null
      ? null
      : new SharedGreylistSchedule(coordination, options, { now, background, failed: coordinationFailed });
  const egresses = buildEgresses(options.smtp);
  // The per-address baseline runs the same sessions with one address each and no PIPELINING:
  // the comparison then measures connection reuse and pipelining, nothing else.
  const sessionOptions = {
    port: options.smtp.port,
    pipelining: pooled,
    mailFrom: options.smtp.mailFrom,
    stepTimeoutMs: timeoutMs,
    pipelineDepth: tuning.pipelineDepth,
    recipientsPerTransaction: tuning.recipientsPerTransaction,
    recipientsPerSession: pooled ? tuning.recipientsPerSession : 1,
    maxRejectsPerSession: tuning.maxRejectsPerSession,
    greylistRetries: options.greylistRetries,
    greylistDelayMs: options.greylistDelayMs,
    maxDrops: tuning.maxDrops,
    starttls: options.smtp.starttls ?? 'opportunistic',
    ...(options.smtp.connectAttemptDelayMs === undefined
      ? {}
      : { connectAttemptDelayMs: options.smtp.connectAttemptDelayMs }),
    ...(options.smtp.heldReplyMarginMs === undefined
      ? {}
      : { heldReplyMarginMs: options.smtp.heldReplyMarginMs }),
  };

  const scheduler: ProbeScheduler = new ProbeScheduler(
    {
      concurrency: options.concurrency,
      perHostConcurrency: options.perHostConcurrency,
      backoffBaseMs: tuning.hostBackoffMs,
      backoffMaxMs: tuning.hostBackoffMaxMs,
      maxHostFailures: tuning.maxHostFailures,
      itemsPerSession: pooled ? tuning.itemsPerSession : 1,
      sessionLeaseMs: tuning.sessionLeaseMs,
      egresses,
      egressRestMs: tuning.egressRestMs,
      providerConcurrency: tuning.providerConcurrency,
      providerSessionsPerSecond: tuning.providerSessionsPerSecond,
      guard: deps.guard ?? null,
      broker: deps.broker ?? null,
      preferIpv4: options.smtp.preferIpv4 === true,
    },
    {
      now,
      random,
      runSession: (lane, slot, seat) =>
        runPooledSession(
          lane,
          slot,
          sessionOptions,
          { scheduler, catchAll, greylist, now, broker: deps.broker ?? null, heldReplies },
          seat,
        ),
      // A single verification's idle session carries a group of work (pooled sessions only).
      ...(broker === undefined || !pooled
        ? {}
        : {
            runBorrowed: (lane: Lane, idle: IdleSession) =>
              runBorrowedGroup(lane, idle, broker, sessionOptions, { scheduler, catchAll, greylist, now }),
          }),
      sessionOpened: (lane) => deps.observer?.onSessionOpen?.(lane.queue.key, lane.egress.id),
      sessionClosed: (lane) => deps.observer?.onSessionClose?.(lane.queue.key, lane.egress.id),
      hostGivenUp: ({ queue, egress }, failure, given, failures) => {
        const addresses = given.length;
        deps.observer?.onHostGivenUp?.(queue.key, egress.id, failure.kind, {
          stage: failure.stage,
          addresses,
          failures,
        });
        // The calls (jobs) whose addresses were given up, by the label their caller gave them.
        const labels = new Set<string>();
        for (const work of given)
          if (work.kind === 'rcpt' && work.run.label !== undefined) labels.add(work.run.label);
        deps.logger?.warn(
          {
            host: queue.exchange,
            address: queue.key,
            failure: failure.kind,
            stage: failure.stage,
            failures,
            detail: failure.detail,
            addresses,
            ...(labels.size > 0 ? { calls: [...labels] } : {}),
          },
          'MX host given up for this batch',
        );
      },
      giveUp: (work, outcome) => {
        if (work.kind === 'catch-all') catchAll.decide(work.domain, null);
        else work.run.settle(work, outcome);
      },
      coordinationFailed,
    },
    coordination,
  );

  const runs = new Set<BatchRun>();
  let closed = false;

  return {
    async verifyMany(
      emails: readonly string[],
      verifyOptions: VerifyManyOptions = {},
    ): Promise<VerificationResult[]> {
      if (closed) throw new Error('batch engine is closed');
      const run = new BatchRun(
        { resolve, scheduler, catchAll, greylist, maxMxHosts: options.smtp.maxMxHosts, random },
        emails,
        verifyOptions,
      );
      runs.add(run);
      try {
        return await run.run();
      } finally {
        runs.delete(run);
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const run of runs) run.abort(new Error('batch engine closed'));
      await scheduler.close();
      await background.drain();
      resolver.close();
    },
  };
}

type Tuning = { -readonly [K in keyof typeof BATCH_DEFAULTS]: number };

/** The tuning fields the caller set (undefined ones keep their defaults). */
function definedOnly(options: BatchEngineOptions): Partial<Tuning> {
  const out: Partial<Tuning> = {};
  for (const key of Object.keys(BATCH_DEFAULTS) as (keyof Tuning)[]) {
    const value = options[key];
    if (typeof value === 'number') out[key] = value;
  }
  return out;
}
