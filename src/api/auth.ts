/**
 * Authentication, scope and rate limit, in that order, for every route that declares a scope in
 * its config (`config: { scope: 'batch' }`). They run in onRequest, before the body is read, so
 * an unauthenticated or throttled request costs no parsing. The authenticated caller is on
 * `request.auth`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { KeyCache } from '../services/keys/key-cache.js';
import {
  authenticateKey,
  type AuthenticatedKey,
  type KeyKind,
  type Scope,
} from '../services/keys/keys.service.js';
import type { PublishableRules } from '../services/keys/publishable-keys.js';
import { accountLimits, type PlanTable } from '../services/usage/plans.js';
import type { Executor } from '../store/executor.js';
import { clientKey, type RateLimiter } from '../services/usage/rate-limit.js';
import { setRateLimitHeaders } from './rate-limit.js';
import { checkPublishableRequest, type PublishableDeps } from './publishable.js';

/** Who is calling, once authenticated. */
export interface RequestAuth {
  accountId: string;
  keyId: string;
  kind: KeyKind;
  scopes: ReadonlySet<Scope>;
  /** A publishable key's rules (docs/widget.md); null for a secret key. */
  publishable: PublishableRules | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for this route; routes without one are public (health, metrics). */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** Set by the auth hook on routes that declare a scope; null elsewhere. */
    auth: RequestAuth | null;
  }
}

export interface AuthDeps extends PublishableDeps {
  db: Executor;
  plans: PlanTable;
  rateLimiter: RateLimiter;
  keyCache: KeyCache<AuthenticatedKey>;
  /** Failed authentications per client address and second; 0: unlimited. */
  authFailureRateLimit: number;
}

/**
 * Counts a failed authentication against the client's address (`request.ip`: the socket's peer,
 * or what X-Forwarded-For says when --trust-proxy trusts it). Past the allowance the client gets
 * 429 instead of 401: a flood of bad keys costs one key lookup each, then nothing but this count.
 * A valid key is never counted here; its account's own rate limit applies as before.
 */
async function limitFailure(
  deps: AuthDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  failure: unknown,
): Promise<never> {
  if (deps.authFailureRateLimit > 0 && failure instanceof AppError) {
    const decision = await deps.rateLimiter.consume(
      `authfail:${clientKey(request.ip)}`,
      deps.authFailureRateLimit,
    );
    if (!decision.allowed) {
      setRateLimitHeaders(reply, decision);
      throw new AppError(
        'rate_limit_exceeded',
        `too many failed authentications from this address; retry in ${decision.resetSeconds} s`,
        { retryAfterSeconds: decision.resetSeconds },
      );
    }
  }
  throw failure;
}

/** account_suspended, with the operator's reason when one was given (docs/operators.md). */
export function suspendedError(reason: string | null): AppError {
  return new AppError(
    'account_suspended',
    `this account is suspended${reason ? `: ${reason}` : ''}; its members can sign in to the dashboard to see why`,
  );
}

const BEARER = /^Bearer +(\S+) *$/i;

/** The key presented in `Authorization: Bearer <key>`; invalid_api_key when absent or another scheme. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '')
    throw new AppError('invalid_api_key', 'missing Authorization: Bearer <API key> header');
  const m = BEARER.exec(header);
  if (!m?.[1]) throw new AppError('invalid_api_key', 'the Authorization header must be "Bearer <API key>"');
  return m[1];
}

/** The onRequest hook of a route that needs `scope`: authenticates, checks the scope, then takes one request from the rate limit. */
export function createAuthHook(deps: AuthDeps, scope: Scope) {
  return async function authHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    let key: Awaited<ReturnType<typeof authenticateKey>>;
    try {
      key = await authenticateKey(deps.db, bearerToken(request.headers.authorization), deps.keyCache);
    } catch (failure) {
      return limitFailure(deps, request, reply, failure);
    }
    // A valid key of a suspended account: refused, but not counted as a failed authentication.
    if (key.accountSuspension !== null) throw suspendedError(key.accountSuspension.reason);
    if (!key.scopes.has(scope))
      throw new AppError(
        'insufficient_permissions',
        `this API key lacks the "${scope}" scope needed for this endpoint`,
      );
    request.auth = key;
    // A publishable key (docs/widget.md): its route, origin and own limits before the account's.
    if (key.publishable !== null) await checkPublishableRequest(deps, key, request, reply);

    const { ratePerSecond } = accountLimits(deps.plans, {
      plan: key.accountPlan,
      quota_limit: null,
      rate_limit: key.accountRateLimit,
    });
    const decision = await deps.rateLimiter.consume(key.accountId, ratePerSecond);
    // Every later response of this request (2xx or error) carries the rate-limit state.
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed)
      throw new AppError(
        'rate_limit_exceeded',
        `rate limit of ${decision.limit} requests per second exceeded`,
        {
          retryAfterSeconds: decision.resetSeconds,
        },
      );
  };
}

/**
 * Registers the `request.auth` decoration and gives every route that declares a scope the auth
 * hook as its first onRequest hook (after the app-wide ones). Bound per route, the hook costs
 * public routes nothing and reads no route options per request. Must be installed before the
 * routes are registered.
 */
export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('auth', null);
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (scope === undefined) return;
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [createAuthHook(deps, scope), ...own];
  });
}

/** The authenticated caller of a route that declares a scope. */
export function requireAuth(request: FastifyRequest): RequestAuth {
  if (request.auth === null) throw new Error(`route ${request.routeOptions.url ?? ''} declares no scope`);
  return request.auth;
}
