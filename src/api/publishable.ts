/**
 * Publishable keys at the API's edge (docs/widget.md): the checks a request of such a key passes
 * after authentication (the route, the origin, the visitor's, the key's and the day's limits), the
 * CORS headers of its answers, and the preflight of `POST /v1/verify`.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { PublishableDefaults } from '../config.js';
import { AppError } from '../errors.js';
import type { Clock } from '../clock.js';
import type { AuthenticatedKey } from '../services/keys/keys.service.js';
import {
  checkOrigin,
  consumeDailyCap,
  createOriginCheck,
  effectiveLimits,
} from '../services/keys/publishable-keys.js';
import { accountLimits, type PlanTable } from '../services/usage/plans.js';
import { clientKey, type RateLimiter } from '../services/usage/rate-limit.js';
import type { Executor } from '../store/executor.js';
import { errorResponses } from './schemas.js';
import { setRateLimitHeaders } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route accepts publishable keys (only POST /v1/verify does). */
    publishable?: boolean;
  }
}

export interface PublishableDeps {
  db: Executor;
  clock: Clock;
  plans: PlanTable;
  rateLimiter: RateLimiter;
  publishableDefaults: PublishableDefaults;
  /** Tells the owner that a key reached its daily cap (services/keys/key-cap.service.ts); never throws. */
  capReached: (keyId: string, cap: number) => void;
}

/** What a browser may read of an answer besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = 'ratelimit, ratelimit-policy, retry-after, x-request-id';

async function consumeLimit(
  deps: PublishableDeps,
  reply: FastifyReply,
  bucket: string,
  perSecond: number,
  what: string,
): Promise<void> {
  const decision = await deps.rateLimiter.consume(bucket, perSecond);
  if (decision.allowed) return;
  setRateLimitHeaders(reply, decision);
  throw new AppError('rate_limit_exceeded', `${what} of ${perSecond} requests per second exceeded`, {
    retryAfterSeconds: decision.resetSeconds,
  });
}

/**
 * The checks of a publishable key's request, in order: the route must accept publishable keys
 * (else `insufficient_permissions`), the `Origin` must be one of the key's (else
 * `origin_not_allowed`); from there on every answer carries the CORS headers for that origin, so
 * that the page can read a 429 as well as a result. Then the visitor's limit (per client address
 * and key), the key's own limit, and the day's cap (in the store, shared by every process); the
 * request that reaches the cap tells the owner.
 */
export async function checkPublishableRequest(
  deps: PublishableDeps,
  key: AuthenticatedKey,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const rules = key.publishable;
  if (rules === null) return;
  if (request.routeOptions.config.publishable !== true)
    throw new AppError(
      'insufficient_permissions',
      'a publishable key opens only POST /v1/verify; use a secret key on your server for this endpoint',
    );
  const origin = request.headers.origin;
  checkOrigin(rules, origin);
  void reply
    .header('access-control-allow-origin', origin)
    .header('vary', 'Origin')
    .header('access-control-expose-headers', EXPOSED_HEADERS);
  // A key without a cap of its own takes one from its account's monthly quota (issue 26).
  const { quotaLimit } = accountLimits(deps.plans, {
    plan: key.accountPlan,
    quota_limit: key.accountQuotaLimit,
    rate_limit: key.accountRateLimit,
  });
  const limits = effectiveLimits(rules, deps.publishableDefaults, quotaLimit);
  await consumeLimit(
    deps,
    reply,
    `pub:visitor:${key.keyId}:${clientKey(request.ip)}`,
    limits.visitorRateLimit,
    "this visitor's rate limit",
  );
  await consumeLimit(deps, reply, `pub:key:${key.keyId}`, limits.keyRateLimit, "this key's rate limit");
  if (await consumeDailyCap(deps.db, key.keyId, limits.dailyCap, deps.clock.now()))
    deps.capReached(key.keyId, limits.dailyCap);
}

/** How long a browser may keep a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE = 600;

/**
 * `OPTIONS /v1/verify`, the CORS preflight a browser sends before a page's POST. It carries no
 * key, so it is answered for an origin that some active publishable key allows; the POST itself
 * is then checked against its own key's origins.
 */
export function preflightRoutes(deps: Pick<PublishableDeps, 'db'>): FastifyPluginAsync {
  const isAllowed = createOriginCheck(deps.db);
  return async (app) => {
    app.options(
      '/v1/verify',
      {
        schema: {
          operationId: 'preflightVerify',
          summary: 'CORS preflight of POST /v1/verify (publishable keys)',
          description:
            'Answered 204 with the CORS headers when the Origin is allowed by an active publishable key, 403 `origin_not_allowed` otherwise. See docs/widget.md.',
          tags: ['verification'],
          security: [],
          response: {
            204: { type: 'null', description: 'The origin may POST /v1/verify.' },
            ...errorResponses(['origin_not_allowed']),
          },
        },
      },
      async (request, reply) => {
        const origin = request.headers.origin;
        void reply.header('vary', 'Origin');
        if (origin === undefined || !(await isAllowed(origin)))
          throw new AppError(
            'origin_not_allowed',
            origin === undefined
              ? 'a CORS preflight needs an Origin'
              : `origin ${origin} is not allowed by any publishable key`,
          );
        return reply
          .code(204)
          .header('access-control-allow-origin', origin)
          .header('access-control-allow-methods', 'POST')
          .header('access-control-allow-headers', 'authorization, content-type')
          .header('access-control-max-age', String(PREFLIGHT_MAX_AGE))
          .send();
      },
    );
  };
}
