/**
 * Builds the HTTP API as a Fastify instance: the server's own hooks (request id, shutdown,
 * logging, metrics) and the v1 scope. src/runtime.ts composes it with the dashboard
 * (`buildHttpApp`). It never listens: `serve` does (src/runtime.ts), and tests use `app.inject()`.
 *
 * Request lifecycle of a v1 route: X-Request-Id header → auth → scope → rate limit (onRequest,
 * before the body is read) → Content-Type and JSON parsing → schema validation → handler (quota,
 * then the work). Every error on the way becomes the `{error, message, request_id}` envelope in
 * api/errors.ts.
 */
import swagger from '@fastify/swagger';
import { isIP } from 'node:net';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyPluginAsync,
} from 'fastify';
import secureJsonParse from 'secure-json-parse';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { createCapMailer } from '../services/keys/key-cap-mail.js';
import { tellCapReached } from '../services/keys/key-cap.service.js';
import { createKeyCache } from '../services/keys/key-cache.js';
import { createKeyUseRecorder } from '../services/keys/key-usage.service.js';
import { createStoreUsageCache } from '../services/usage/usage-cache.js';
import { plansFromConfig } from '../services/usage/plans.js';
import { createMemoryRateLimiter, type RateLimiter } from '../services/usage/rate-limit.js';
import { installAuth } from './auth.js';
import type { ApiDeps } from './deps.js';
import {
  createClientErrorHandler,
  errorBodySchema,
  frameworkErrorHandler,
  installErrorHandlers,
} from './errors.js';
import { sendError } from '../http/errors.js';
import {
  createMetrics,
  registerDnsTrustMetrics,
  registerSessionPoolMetrics,
  type ApiMetrics,
} from './metrics.js';
import { trackRoutesForMethodNotAllowed } from './method-not-allowed.js';
import { genReqId, REQUEST_ID_HEADER } from './request-id.js';
import { createValidatorCompiler } from './validation.js';
import { healthRoutes } from './routes/health.routes.js';
import { jobsRoutes } from './routes/jobs.routes.js';
import { metricsRoutes } from './routes/metrics.routes.js';
import { openapiRoutes } from './routes/openapi.routes.js';
import { outcomesRoutes } from './routes/outcomes.routes.js';
import { accountOutcomesRoutes } from './routes/account-outcomes.routes.js';
import { filtersRoutes } from './routes/filters.routes.js';
import { outcomeHooksRoutes } from './routes/outcome-hooks.routes.js';
import { outcomeSourcesRoutes } from './routes/outcome-sources.routes.js';
import { fetchFromSns } from '../services/outcomes/esp/sns-fetch.js';
import { usageRoutes } from './routes/usage.routes.js';
import { verifyRoutes } from './routes/verify.routes.js';
import { widgetRoutes } from './routes/widget.routes.js';
import { preflightRoutes } from './publishable.js';

export interface BuildAppOptions extends AppContext {
  /** Default: an in-memory limiter of this app. */
  rateLimiter?: RateLimiter;
  /** Default: a fresh registry of this app. */
  metrics?: ApiMetrics;
  /** Default: none; /readyz then checks the store only. */
  readinessChecks?: ApiDeps['readinessChecks'];
  /** Default: the configured plans. */
  plans?: ApiDeps['plans'];
  /** Default: a fresh cache of this app. */
  keyCache?: ApiDeps['keyCache'];
  /** Default: a fresh cache of this app, emptied by the store's change token. */
  usageCache?: ApiDeps['usageCache'];
  /** Default: https GETs of SNS hosts, SSRF-checked (services/outcomes/esp/sns-fetch.ts). */
  snsFetch?: ApiDeps['snsFetch'];
}

/** The API's collaborators, `options`' own where given. src/runtime.ts shares them with the dashboard. */
export function apiDeps(options: BuildAppOptions): ApiDeps {
  return {
    ...options,
    plans: options.plans ?? plansFromConfig(options.config),
    rateLimiter: options.rateLimiter ?? createMemoryRateLimiter(),
    metrics: withEngineGauges(options.metrics ?? createMetrics(), options),
    testDomain: options.config.testDomain,
    keyCache: options.keyCache ?? createKeyCache(),
    usageCache: options.usageCache ?? createStoreUsageCache(options.db, options.config.usageCacheTtlMs),
    readinessChecks: options.readinessChecks ?? {},
    snsFetch: options.snsFetch ?? fetchFromSns,
  };
}

/** The metrics, with the verifier's warm SMTP sessions and the resolver's trust among them. */
function withEngineGauges(
  metrics: ApiMetrics,
  { verifier, dnsTrust }: Pick<ApiDeps, 'verifier' | 'dnsTrust'>,
): ApiMetrics {
  registerSessionPoolMetrics(metrics.registry, () => verifier.sessionStats?.());
  registerDnsTrustMetrics(metrics.registry, () => dnsTrust.status());
  return metrics;
}

/** Every route plugin of the API, in one list. */
function routePlugins(deps: ApiDeps): FastifyPluginAsync[] {
  return [
    healthRoutes(deps),
    metricsRoutes(deps),
    openapiRoutes(),
    verifyRoutes(deps),
    preflightRoutes(deps),
    widgetRoutes(),
    usageRoutes(deps),
    jobsRoutes(deps),
    outcomesRoutes(deps),
    accountOutcomesRoutes(deps),
    filtersRoutes(deps),
    outcomeSourcesRoutes(deps),
  ];
}

/**
 * Fastify's own JSON parser, but one that says why it refuses: secure-json-parse (which Fastify
 * uses) throws a distinct error for a `__proto__` or `constructor.prototype` key, and Fastify
 * reports every failure as "not valid JSON".
 */
function parseJsonBody(
  _request: unknown,
  body: string | Buffer,
  done: (err: Error | null, value?: unknown) => void,
): void {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.length === 0)
    return done(new AppError('invalid_json', 'the request body is empty; send a JSON object'));
  try {
    done(null, secureJsonParse(text, { protoAction: 'error', constructorAction: 'error' }));
  } catch (err) {
    if (err instanceof SyntaxError && /prototype property/i.test(err.message))
      return done(
        new AppError(
          'invalid_request',
          'the body holds a "__proto__" or "constructor.prototype" key, which is refused: remove it',
        ),
      );
    done(new AppError('invalid_json', 'the request body is not valid JSON'));
  }
}

/**
 * A hop count becomes the function proxy-addr would compile from it (Fastify's types take no
 * number). Never `true`: config.ts refuses it (it would believe the client's own entry).
 */
function trustProxyOption(
  value: false | number | readonly string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return value === false ? false : [...value];
}

/**
 * Behind a trusted proxy the client address is an entry of X-Forwarded-For: one that is not an IP
 * address (a proxy that writes something else, or more hops trusted than there are proxies, so
 * that the client's own text is taken) would key every per-client limit and be written to the
 * security log and the sessions list as it stands. It is refused instead.
 */
function clientAddressError(request: FastifyRequest): string | null {
  if (isIP(request.ip) !== 0) return null;
  return 'the client address that X-Forwarded-For gives is not an IP address; the proxy in front of this server must append the address it saw (see --trust-proxy in docs/security.md)';
}

const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i;
const MESSAGE_CONTENT_TYPE = /^message\/rfc822\s*(;|$)/i;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route also takes one raw message (`message/rfc822`) as its body, its own parser reads it. */
    messageBody?: boolean;
  }
  interface FastifyInstance {
    /**
     * Answers every request still waiting for its response with 503 service_unavailable,
     * `Retry-After` and `Connection: close` (shutdown, when the grace has run out); returns how
     * many were answered.
     */
    refuseUnfinished(): number;
  }
}

export function buildApp(options: BuildAppOptions): FastifyInstance {
  const deps = apiDeps(options);
  const logger: FastifyBaseLogger = options.logger;
  const app = Fastify({
    loggerInstance: logger,
    genReqId,
    // One line per request at the end (below) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Refused below with the error envelope and a request id, like every other response.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    // Decides request.ip, which keys every per-client limit (docs/security.md).
    trustProxy: trustProxyOption(options.config.trustProxy),
    clientErrorHandler: createClientErrorHandler(logger, genReqId),
  });
  app.setValidatorCompiler(createValidatorCompiler());
  app.addSchema(errorBodySchema);

  // X-Request-Id first, before anything can fail; a request to an unknown route is answered
  // before its body is read (no 415 for a 404). Hooks that never wait are callback-style: an
  // async hook costs a promise and a turn of the microtask queue per request.
  let closing = false;
  const behindProxy = options.config.trustProxy !== false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Requests not yet answered, so that shutdown can answer the ones still unfinished when its
  // grace runs out (a stalled upload) instead of cutting them without a word.
  const unanswered = new Set<FastifyReply>();
  app.decorate('refuseUnfinished', () => {
    let refused = 0;
    for (const reply of unanswered) {
      if (reply.sent || reply.raw.headersSent) continue;
      void reply.header('Retry-After', '1').header('Connection', 'close');
      sendError(
        reply.request,
        reply,
        'service_unavailable',
        'the server shut down before this request finished arriving; retry the request',
      );
      refused++;
    }
    unanswered.clear();
    return refused;
  });
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    if (closing) {
      // Requests already in flight finish; a new one on a kept-alive connection is told to retry elsewhere.
      void reply.header('Retry-After', '1').header('Connection', 'close');
      sendError(request, reply, 'service_unavailable', 'the server is shutting down; retry the request');
      return;
    }
    const badClient = behindProxy ? clientAddressError(request) : null;
    if (badClient !== null) {
      sendError(request, reply, 'invalid_client_address', badClient);
      return;
    }
    if (request.is404) {
      sendError(request, reply, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
      return;
    }
    unanswered.add(reply);
    reply.raw.once('close', () => unanswered.delete(reply));
    done();
  });
  const capMailer = createCapMailer(options.mailer);
  const capDeps = {
    db: options.db,
    clock: options.clock,
    mailer: capMailer,
    keysLink: `${options.config.publicBaseUrl}/keys`,
    logger,
  };
  installAuth(app, {
    ...deps,
    authFailureRateLimit: options.config.authFailureRateLimit,
    publishableDefaults: options.config.publishable,
    capReached: (keyId, cap) => void tellCapReached(capDeps, keyId, cap),
  });
  // JSON bodies are read by secure-json-parse, saying why it refuses; no text/plain parser (the
  // v1 scope below also refuses any body that is not JSON, the dashboard adds text/csv uploads).
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  installErrorHandlers(app, (code) => {
    if (code === 'quota_exceeded') deps.metrics.quotaRefusals.inc();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    request.log.info(
      { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
    done();
  });

  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mailverdict API',
        version: '1.0.0',
        description:
          'E-mail verification: single addresses, batch jobs and account usage. See [docs/api.md](/docs/api.md).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: the mailverdict that serves this document (GET /v1/openapi.json) is the server it
      // describes, wherever it is deployed; a client of docs/openapi.json gives its own base URL.
      servers: [
        {
          url: '/',
          description: 'The mailverdict server this document is served by (its --public-base-url).',
        },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'svc_live_… or svc_test_…' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  // The v1 API's rules live in a scope of their own; src/runtime.ts registers the dashboard
  // (src/dashboard/plugin.ts) beside it in another with its own (CSV uploads, cookies, CSRF,
  // security headers, its error handler): neither changes the other's.
  const keyUses = createKeyUseRecorder({ db: options.db, clock: options.clock, logger: options.logger });
  void app.register(async (v1) => {
    // v1 bodies are JSON (or a raw message where the route says so): a body-carrying method without
    // such a Content-Type is refused, even empty.
    v1.addHook('preValidation', (request, reply, done) => {
      const method = request.method;
      if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return done();
      const type = request.headers['content-type'] ?? '';
      if (JSON_CONTENT_TYPE.test(type)) return done();
      const takesMessage = request.routeOptions.config.messageBody === true;
      if (takesMessage && MESSAGE_CONTENT_TYPE.test(type)) return done();
      sendError(
        request,
        reply,
        'unsupported_media_type',
        `request bodies must be sent as Content-Type: application/json${takesMessage ? ' or message/rfc822' : ''}, got ${type === '' ? 'none' : type}`,
      );
    });
    // After the response: a key's last use (the dashboard's list), written at most once a minute.
    v1.addHook('onResponse', (request, _reply, done) => {
      if (request.auth !== null) keyUses.record(request.auth.keyId);
      done();
    });
    v1.addHook('onClose', async () => keyUses.settled());
    const methodNotAllowed = trackRoutesForMethodNotAllowed(v1);
    for (const plugin of routePlugins(deps)) void v1.register(plugin);
    // Must stay the last registration of this scope: it covers the routes registered above.
    void v1.register(methodNotAllowed);
  });
  void app.register(outcomeHooksRoutes(deps));
  return app;
}
