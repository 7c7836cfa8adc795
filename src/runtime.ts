/**
 * Builds what a process needs from a Config (store opened and migrated, engine, logger, clock)
 * and closes it again. `serve`, `worker`, the CLI commands and tests all start here. It is the
 * composition root (docs/architecture.md): the one place that picks the adapters (Redis or
 * in-process) for the services' ports, builds the background jobs (the batch engine, the worker,
 * deliveries, sweeper and scheduler) and the dashboard's member mailer, and puts the two HTTP
 * edges, the v1 API and the dashboard, into one server.
 */
import pino, { type Logger } from 'pino';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { apiDeps, buildApp, type BuildAppOptions } from './api/app.js';
import { registerEgressMetrics } from './api/egress-metrics.js';
import { createMetrics, type ApiMetrics } from './api/metrics.js';
import { metricsRoute } from './api/routes/metrics.routes.js';
import { isAppError } from './errors.js';
import { HTTP_STATUS } from './http/errors.js';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, type Config } from './config.js';
import type { AppContext } from './context.js';
import { dashboardPlugin } from './dashboard/plugin.js';
import type { EngineCoordination } from './engine/coordination.js';
import type { Verifier } from './engine/types.js';
import { createVerifier } from './engine/verifier.js';
import { createResolverTrust, type ResolverTrustMonitor } from './engine/dns/resolver-trust.js';
import { SessionBroker } from './engine/sessions/broker.js';
import type { EgressGuard } from './engine/egress/egress-guard.js';
import { createLocalEgressHealth, type EgressHealthStore } from './engine/egress/egress-health.js';
import { createRedisEgressHealth } from './redis/egress-health.js';
import { createEgressGuard } from './services/prober/egress-guard.service.js';
import { closeRedis, onceEvery, openRedis, REDIS_WARN_INTERVAL_MS } from './redis/connection.js';
import { createRedisCoordination } from './redis/coordination.js';
import { createRedisRateLimiter } from './redis/rate-limiter.js';
import { createRedisResultStore } from './redis/result-store.js';
import { batchEngineOptions } from './config.js';
import { createBatchEngine } from './engine/batch/batch-engine.js';
import type { BatchEngine } from './engine/batch/types.js';
import type { EgressGate } from './engine/egress/egress.js';
import { systemResolver, type HostResolver } from './services/webhooks/ssrf.js';
import { createChunkVerifier } from './services/batches/chunk-verifier.js';
import { accountLookup } from './services/outcomes/account-data.js';
import { DeliveryRunner } from './jobs/delivery-runner.js';
import { runBackgroundJobs, type BackgroundJobs } from './jobs/embedded.js';
import type { JobMetrics } from './jobs/job-metrics.js';
import { createMailNotifier } from './jobs/notify.js';
import { createScheduler } from './jobs/scheduler.js';
import { createSweeper } from './jobs/sweep.js';
import { createWorker } from './jobs/worker.js';
import type { WorkerKind } from './store/schema/worker.schema.js';
import { createMemberMailer, type MemberMailer } from './services/people/member-mail.js';
import type { OperatorConsoleOptions } from './dashboard/deps.js';
import { PLAN_SLUGS, isPlanSlug, plansFromConfig } from './services/usage/plans.js';
import { createMailer } from './services/mailer.js';
import { resultCacheFromSettings } from './services/verify/result-cache.js';
import { createVerdictLog } from './services/outcomes/verdict-log.js';
import {
  checkSecretKeys,
  sealLegacySecrets,
  type ResealCounts,
} from './services/operators/secrets.service.js';
import { openDatabase } from './store/db.js';
import { migrateToLatest } from './store/migrate.js';
import { MISSING_KEY_MESSAGE, secretKeyConfigured } from './store/secret-keys.js';

export interface Runtime {
  ctx: AppContext;
  /** The process's Redis connection when `config.redisUrl` is set (shared rate limits); else null. */
  redis: Redis | null;
  /** Per-MX-host slots and back-off shared through Redis by every worker on it; null without Redis. */
  coordination: EngineCoordination | null;
  /**
   * The reputation guard of the egresses (services/prober/egress-guard.service.ts), shared through Redis
   * when configured; `serve` and `worker` start its checks. Closed with the runtime.
   */
  guard: EgressGuard;
  /**
   * Whether the DNS resolver tells the truth (engine/dns/resolver-trust.ts); `serve` and `worker`
   * start its checks, and a first negative answer checks it anyway. Closed with the runtime.
   */
  dnsTrust: ResolverTrustMonitor;
  /** Closes the engine, Redis and the store. */
  close(): Promise<void>;
}

/** pino with the Authorization header redacted wherever a request gets logged. */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization'],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 2, sync: false }),
  );
}

export interface RuntimeOptions {
  clock?: Clock;
  logger?: Logger;
  /** Default: the real engine built from `config.engine`. */
  verifier?: Verifier;
}

export async function createRuntime(
  config: Readonly<Config>,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  // Fail fast on bad plan overrides, before anything is opened.
  plansFromConfig(config);
  if (!isPlanSlug(config.bootstrapPlan))
    throw new ConfigError(
      `--bootstrap-plan / MAILVERDICT_BOOTSTRAP_PLAN must be one of ${PLAN_SLUGS.join(', ')}, got "${config.bootstrapPlan}"`,
    );
  // Processes on several hosts must share one key: none made up here (docs/security.md).
  if (config.databaseUrl !== null && !secretKeyConfigured(config.secrets))
    throw new ConfigError(MISSING_KEY_MESSAGE);
  const db = openDatabase(config);
  let sealed: ResealCounts;
  try {
    await migrateToLatest(db);
    await checkSecretKeys(db);
    sealed = await sealLegacySecrets(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const logger = options.logger ?? createLogger(config);
  if (Object.values(sealed).some((n) => n > 0))
    logger.info({ sealed }, 'secrets stored in plaintext by an older version are now sealed');
  const clock = options.clock ?? systemClock;
  const redis = config.redisUrl === null ? null : await openRedis(config.redisUrl, { logger });
  const now = (): number => clock.now().getTime();
  const guard = createEgressGuard(config, {
    store: egressHealthStore(config, redis, now),
    now,
    logger,
  });
  const dnsTrust = createResolverTrust(
    config.engine.dns,
    {
      names: config.dnsTrust.names,
      absentZone: config.dnsTrust.absentZone,
      intervalMs: config.dnsTrust.intervalMs,
    },
    { now, logger },
  );
  // The process's one session broker: single verifications and the embedded batch engine ask it
  // for their sessions (one per-host and per-provider cap, one set of idle sessions).
  const sessionBroker = new SessionBroker({
    perHostConcurrency: config.engine.smtp.perHostConcurrency,
    providerConcurrency: config.engine.smtp.providerConcurrency,
    now,
  });
  // With Redis, single verifications' new sessions also count against the cross-process caps the
  // batch engines keep there (the same keys and caps); warm ones cost no round trip.
  const mayWarnSlots = onceEvery(REDIS_WARN_INTERVAL_MS);
  const coordination =
    redis === null ? null : createRedisCoordination(redis, { keyPrefix: config.redisKeyPrefix });
  const verifier =
    options.verifier ??
    createVerifier(config.engine, {
      // The process's clock, as the batch engine's: its DNS and catch-all caches and its hosts'
      // back-off keep the same time as the rest of the process.
      clock: now,
      guard,
      broker: sessionBroker,
      trust: dnsTrust,
      ...(coordination === null
        ? {}
        : {
            sharedSlots: {
              coordination,
              perHostConcurrency: config.engine.smtp.perHostConcurrency,
              providerConcurrency: config.engine.smtp.providerConcurrency,
              failed: (err: unknown, operation: string) => {
                if (mayWarnSlots()) logger.warn({ err, operation }, 'shared session slots unavailable');
              },
            },
          }),
    });
  const mayWarn = onceEvery(REDIS_WARN_INTERVAL_MS);
  const resultCache = resultCacheFromSettings({
    settings: config.resultCache,
    clock,
    // With Redis every process answers from the one cache; without it each from its own memory.
    shared:
      redis === null
        ? null
        : createRedisResultStore(redis, {
            keyPrefix: config.redisKeyPrefix,
            now: () => clock.now().getTime(),
          }),
    onError: (err) => {
      if (mayWarn()) logger.warn({ err }, 'result cache unreachable: verifying without it');
    },
  });
  const mailer = createMailer(config);
  const verdictLog = createVerdictLog({ db, clock, logger });
  const ctx: AppContext = {
    config,
    db,
    clock,
    logger,
    verifier,
    resultCache,
    dnsTrust,
    mailer,
    verdictLog,
    // Its batch engine takes the caps of the verifier built here (not those of one passed in).
    ...(options.verifier === undefined ? { sessionBroker } : {}),
  };
  let closed: Promise<void> | undefined;
  return {
    ctx,
    redis,
    coordination,
    guard,
    dnsTrust,
    close: () =>
      (closed ??= (async () => {
        await guard.stop();
        await dnsTrust.close();
        await verifier.close();
        mailer?.close();
        if (redis) await closeRedis(redis);
        await verdictLog.close();
        await db.destroy();
        if (!options.logger) logger.flush();
      })()),
  };
}

export interface BackgroundOptions {
  /** Default: a batch engine built from the config (live jobs). */
  batchEngine?: BatchEngine;
  resolveHost?: HostResolver;
  /** Job metrics on the process's /metrics registry (serve); absent for a standalone worker. */
  metrics?: JobMetrics;
  /**
   * The process's shared coordination (`Runtime.coordination`, Redis): the batch engine then takes
   * its per-host session slots and back-off from it, shared with every worker on it. Null or
   * absent: its own.
   */
  coordination?: EngineCoordination | null;
  /**
   * Other processes may verify from the same store (a standalone worker; serve on a database
   * URL): without Redis, a start-up warning says that each applies its own per-host cap.
   */
  storeShared?: boolean;
  /** The chunk worker's lease owner id; default a fresh one. */
  workerId?: string;
  /** The process's reputation guard (`Runtime.guard`): the batch engine skips resting egresses. */
  guard?: EgressGate;
  /** How the worker's row in the store names this process (jobs/worker-presence.ts); default `embedded`. */
  kind?: WorkerKind;
}

/**
 * The background work of a process, composed here (docs/architecture.md): the batch engine and the
 * chunk verifier on it, the chunk worker, the delivery runner (webhooks and e-mails), the retention
 * sweeper and the list scheduler; jobs/embedded.ts runs them. Their batch engines share the
 * per-MX-host session cap and back-off, and their chunk verifiers a job's repeated addresses, only
 * through Redis; without it each process applies its own.
 */
export function startEmbeddedWorkers(ctx: AppContext, options: BackgroundOptions = {}): BackgroundJobs {
  const { config, logger } = ctx;
  const coordination = options.batchEngine === undefined ? (options.coordination ?? null) : null;
  if (options.batchEngine === undefined && coordination === null && options.storeShared === true) {
    logger.warn(
      { perHostConcurrency: config.engine.smtp.perHostConcurrency },
      'no Redis configured (--redis-url): this process applies the per-MX-host session cap and back-off on its own; ' +
        'several worker processes on one store together open up to that cap per process to a host',
    );
  }
  const batchEngine =
    options.batchEngine ??
    createBatchEngine(batchEngineOptions(config), {
      clock: ctx.clock,
      logger,
      ...(coordination ? { coordination } : {}),
      ...(options.guard ? { guard: options.guard } : {}),
      ...(options.metrics ? { observer: options.metrics.engineObserver } : {}),
      // The process's session broker, which its single verifications ask too (engine/sessions/broker.ts).
      ...(ctx.sessionBroker ? { broker: ctx.sessionBroker } : {}),
      // Its NXDOMAIN and "no mail host" answers count only while the resolver is trusted.
      trust: ctx.dnsTrust,
    });
  const worker = createWorker({
    ...(options.workerId === undefined ? {} : { workerId: options.workerId }),
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    verifyChunk: createChunkVerifier({
      verifier: ctx.verifier,
      dnsTrust: ctx.dnsTrust,
      batchEngine,
      testDomain: config.testDomain,
      testModeChunkDelayMs: config.batch.testModeChunkDelayMs,
      coordination,
      resultCache: ctx.resultCache ?? null,
      accountData: accountLookup(ctx),
      verdictLog: ctx.verdictLog,
    }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const notifier = createMailNotifier(ctx.mailer);
  const deliveries = new DeliveryRunner({
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    resolveHost: options.resolveHost ?? systemResolver,
    notifier,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });

  const sweeper = createSweeper({
    db: ctx.db,
    clock: ctx.clock,
    logger,
    auditRetentionMs: config.auditRetentionMs,
    outcomeRetentionMs: config.outcomeRetentionMs,
  });
  const scheduler = createScheduler({
    db: ctx.db,
    clock: ctx.clock,
    config,
    logger,
    mailer: ctx.mailer ?? null,
  });
  return runBackgroundJobs({
    ctx,
    worker,
    deliveries,
    sweeper,
    scheduler,
    kind: options.kind ?? 'embedded',
    closeBuilt: async () => {
      if (options.batchEngine === undefined) await batchEngine.close();
      await coordination?.close();
    },
  });
}

/** Where egress health is kept: in Redis when the processes share one, else in this process. */
function egressHealthStore(
  config: Readonly<Config>,
  redis: Redis | null,
  now: () => number,
): EgressHealthStore {
  return redis === null
    ? createLocalEgressHealth(now)
    : createRedisEgressHealth(redis, { keyPrefix: config.redisKeyPrefix });
}

/**
 * The egress health every `serve` and `worker` on the configured Redis share, for a command that
 * only reads it (`mailverdict egresses`); without Redis, this process's own (empty) record.
 */
export async function openEgressHealth(
  config: Readonly<Config>,
): Promise<{ store: EgressHealthStore; shared: boolean; close(): Promise<void> }> {
  const redis =
    config.redisUrl === null ? null : await openRedis(config.redisUrl, { logger: pino({ level: 'silent' }) });
  return {
    store: egressHealthStore(config, redis, Date.now),
    shared: redis !== null,
    close: async () => {
      if (redis !== null) await closeRedis(redis);
    },
  };
}

export interface HttpAppOptions extends BuildAppOptions {
  /** Where the built dashboard app is (default: dist/web of this package). */
  webDir?: string;
  /** Default: the SMTP relay's, when one is configured. */
  memberMailer?: MemberMailer | null;
  /** The operator console's collaborators (dashboard/deps.ts). */
  operatorConsole?: OperatorConsoleOptions;
}

/**
 * The server of `serve`: the v1 API (api/app.ts) and the dashboard (dashboard/plugin.ts), each in
 * its own scope, sharing one rate limiter, usage cache, key cache and metrics registry.
 */
export function buildHttpApp(options: HttpAppOptions): FastifyInstance {
  const { webDir, memberMailer, operatorConsole, ...rest } = options;
  const deps = apiDeps(rest);
  const app = buildApp(deps);
  void app.register(
    dashboardPlugin({
      ...deps,
      ...(webDir === undefined ? {} : { webDir }),
      // The dashboard's people get their e-mails through the process's one mailer.
      memberMailer: memberMailer === undefined ? createMemberMailer(rest.mailer) : memberMailer,
      ...(operatorConsole === undefined ? {} : { operatorConsole }),
    }),
  );
  return app;
}

export interface RunningServer {
  app: FastifyInstance;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  /** `--metrics-listen`'s listener, e.g. http://127.0.0.1:9464; null when /metrics is on the main one. */
  metricsUrl: string | null;
  /** Stops accepting, lets in-flight requests finish, then closes the app. */
  close(): Promise<void>;
}

/** Builds the API on a runtime and listens on `config.host:config.port` (0: an ephemeral port). */
export async function startServer(
  runtime: Runtime,
  options: Partial<Pick<BuildAppOptions, 'rateLimiter' | 'metrics'>> = {},
): Promise<RunningServer> {
  const { config, logger } = runtime.ctx;
  const { redis } = runtime;
  const metrics = options.metrics ?? createMetrics({ processMetrics: true });
  registerEgressMetrics(metrics.registry, () => runtime.guard.statuses());
  const app = buildHttpApp({
    ...runtime.ctx,
    metrics,
    // With Redis, every API process counts each account's requests in one shared window.
    rateLimiter:
      options.rateLimiter ??
      (redis === null
        ? undefined
        : createRedisRateLimiter(redis, {
            keyPrefix: config.redisKeyPrefix,
            registry: metrics.registry,
            logger,
          })),
    readinessChecks: redis === null ? {} : { redis: () => redis.ping() },
    operatorConsole: { egressStatuses: () => runtime.guard.statuses() },
  });
  const ops = config.metrics.listen === null ? null : await startMetricsListener(config, metrics, logger);
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await ops?.app.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  return {
    app,
    url: listenerUrl(config.host, port),
    port,
    metricsUrl: ops?.url ?? null,
    close: async () => {
      await closeGracefully(app);
      await ops?.app.close();
    },
  };
}

function listenerUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * `--metrics-listen`: /metrics (and nothing else) on a listener of its own, for a private network,
 * so that the listener the Internet reaches has none (issue 26).
 */
async function startMetricsListener(
  config: Readonly<Config>,
  metrics: ApiMetrics,
  logger: Logger,
): Promise<{ app: FastifyInstance; url: string }> {
  const listen = config.metrics.listen!;
  const opsLogger: FastifyBaseLogger = logger;
  const ops: FastifyInstance = Fastify({
    loggerInstance: opsLogger,
    disableRequestLogging: true,
  });
  ops.setErrorHandler((err, request, reply) => {
    const code = isAppError(err) ? err.code : 'internal_error';
    void reply.code(HTTP_STATUS[code]).send({
      error: code,
      message: isAppError(err) ? err.message : 'internal error',
      request_id: request.id,
    });
  });
  ops.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({
      error: 'not_found',
      message: `no route ${request.method} ${request.url.split('?')[0]}`,
      request_id: request.id,
    });
  });
  await ops.register(metricsRoute(metrics, config.metrics.token));
  await ops.listen({ host: listen.host, port: listen.port });
  const address = ops.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : listen.port;
  return { app: ops, url: listenerUrl(listen.host, port) };
}

/** How long in-flight requests get to finish on shutdown before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;
const IDLE_SWEEP_MS = 50;
/** Time the 503s of requests refused at the end of the grace get before connections are cut. */
const REFUSAL_FLUSH_MS = 200;

/**
 * Stops accepting, lets in-flight requests finish, and closes keep-alive connections as soon as
 * they fall idle (Node closes only those idle at the moment of close(); a client that keeps its
 * connection open would otherwise hold the shutdown for the whole keep-alive timeout).
 */
async function closeGracefully(app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  let cut: NodeJS.Timeout | undefined;
  const deadline = setTimeout(() => {
    // An upload still arriving gets a 503 it can retry on; the connections close just after, once
    // those answers are on the wire (a response already streaming is cut: its client sees an
    // incomplete body).
    app.refuseUnfinished();
    cut = setTimeout(() => app.server.closeAllConnections(), REFUSAL_FLUSH_MS);
  }, SHUTDOWN_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
    clearTimeout(cut);
  }
}
