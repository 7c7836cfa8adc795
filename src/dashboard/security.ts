/**
 * The dashboard's request guards (docs/dashboard.md, "Security"), all in onRequest, before a
 * body is read:
 *
 * 1. Cross-site refusal, for every request that can change state (not GET/HEAD/OPTIONS): 403
 *    `csrf_rejected` when the Content-Type is one an HTML form can send
 *    (application/x-www-form-urlencoded, multipart/form-data, text/plain), when `Origin` names
 *    another origin than the service's own (`ownOrigins`: never from the request's `Host`, which
 *    the client writes), or when `Sec-Fetch-Site` says cross-site or same-site.
 * 2. The session: the cookie's secret opens a session in the store (services/people/sessions.service.ts),
 *    or 401 `unauthenticated`. Routes marked `dashboardAccess: 'public'` (sign-in, invitations,
 *    password resets) skip it.
 * 3. The session's CSRF token in `X-CSRF-Token` on every state-changing request of a signed-in
 *    member, compared in constant time, or 403 `csrf_rejected`.
 * 4. A person who must have two factors where the session acts (the current account requires
 *    them, or the person is an operator) and has none reaches only the routes marked
 *    `dashboardAccess: 'enrolment'` (the session, turning TOTP on); others answer 403
 *    `two_factor_required`.
 *
 * Then each route says what it needs: `requireSession` (a session acting in an account: every
 * account-scoped route reads the account from it, so another account's ids answer 404),
 * `requirePerson` (what is the person's, whatever the account: the session, two factors, the
 * password, the sessions page) or `requireOperator` (404 `not_found` for anyone else).
 *
 * The cookie: `mv_session`, HttpOnly, SameSite=Lax, Path=/; with an https public base URL also
 * Secure and named `__Host-mv_session` (the browser then refuses it from any subdomain or path).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaultPublicBaseUrl } from '../config.js';
import { AppError } from '../errors.js';
import {
  actsInAccount,
  authenticateSession,
  csrfTokenMatches,
  type DashboardSession,
  type PersonSession,
  type NewSession,
  type SessionSettings,
} from '../services/people/sessions.service.js';
import type { Clock } from '../clock.js';
import { DEVICE_COOKIE_MAX_AGE_MS } from '../services/people/sign-in-device.js';
import type { Executor } from '../store/executor.js';
import { CSRF_HEADER } from './contract.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `public`: the dashboard route needs no session (and so no CSRF token). `enrolment`: it
     * needs one, and is open to a member whose account requires two factors before they have
     * them (every other route answers 403 `two_factor_required` to such a member).
     */
    dashboardAccess?: 'public' | 'enrolment';
  }
  interface FastifyRequest {
    /** Set by the session guard on dashboard routes that need a session; null elsewhere. */
    dashboardSession: PersonSession | null;
  }
}

export function sessionCookie(publicBaseUrl: string): { name: string; secure: boolean } {
  const secure = publicBaseUrl.startsWith('https:');
  return { name: secure ? '__Host-mv_session' : 'mv_session', secure };
}

/** The directives the dashboard's pages and API answer with (no inline script or style anywhere). */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  objectSrc: ["'none'"],
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The Content-Types an HTML form can send cross-site without a preflight. */
const FORM_TYPES = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\s*(;|$)/i;

export interface GuardDeps {
  db: Executor;
  clock: Clock;
  settings: SessionSettings;
  publicBaseUrl: string;
  /** `--host` and `--port`: whether `publicBaseUrl` was configured or is their default. */
  listen: { host: string; port: number };
  cookie: { name: string; secure: boolean };
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** An address of the socket as a URL's host: IPv4-mapped IPv6 as IPv4, IPv6 in brackets. */
function urlHost(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  return address.includes(':') ? `[${address}]` : address;
}

/**
 * The origins of the dashboard's own pages, which `Origin` must name on a state-changing request
 * (issue 26, item 10). Never the request's `Host`: a client writes it, so a forged `Host` with a
 * matching `Origin` (DNS rebinding does exactly that from a browser) would pass.
 *
 * - `--public-base-url` configured: its origin, and nothing else.
 * - not configured (its default, `http://<host>:<port>`): that origin, and the address and port
 *   the connection actually reached (the socket's, not a header; so `--port 0` and `--host
 *   0.0.0.0` work when browsed by address), with `localhost`, `127.0.0.1` and `[::1]` when that
 *   address is a loopback one. A dashboard reached by a name (a proxy, a DNS name) needs
 *   `--public-base-url`, as its links do.
 */
export function ownOrigins(
  deps: Pick<GuardDeps, 'publicBaseUrl' | 'listen'>,
): (request: FastifyRequest) => Set<string> {
  const publicOrigin = new URL(deps.publicBaseUrl).origin;
  const configured = deps.publicBaseUrl !== defaultPublicBaseUrl(deps.listen.host, deps.listen.port);
  return (request) => {
    const origins = new Set([publicOrigin]);
    const { localAddress, localPort } = request.socket;
    if (configured || localAddress === undefined || localPort === undefined) return origins;
    const host = urlHost(localAddress);
    const names = LOOPBACK_NAMES.includes(host) || /^127\./.test(host) ? [host, ...LOOPBACK_NAMES] : [host];
    for (const name of names) origins.add(`http://${name}:${localPort}`);
    return origins;
  };
}

function refuse(message: string): AppError {
  return new AppError('csrf_rejected', message);
}

/** Guard 1 of the module comment. */
function refuseCrossSite(request: FastifyRequest, own: (request: FastifyRequest) => Set<string>): void {
  if (FORM_TYPES.test(request.headers['content-type'] ?? ''))
    throw refuse('the dashboard accepts no form posts; this looks like a request from another site');
  const origin = request.headers.origin;
  if (origin !== undefined && !own(request).has(origin))
    throw refuse(`requests from ${origin} are refused: the dashboard answers its own pages only`);
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    throw refuse('cross-site requests are refused: the dashboard answers its own pages only');
}

/** Installs the three guards of the module comment on every route of `app`'s scope. */
export function installGuards(app: FastifyInstance, deps: GuardDeps): void {
  const own = ownOrigins(deps);
  app.decorateRequest('dashboardSession', null);
  app.addHook('onRequest', async (request) => {
    const changesState = !SAFE_METHODS.has(request.method);
    if (changesState) refuseCrossSite(request, own);
    if (request.routeOptions.config.dashboardAccess === 'public') return;
    const secret = request.cookies[deps.cookie.name];
    const session = await authenticateSession(deps.db, deps.clock, deps.settings, secret);
    if (changesState && !csrfTokenMatches(secret!, headerValue(request.headers[CSRF_HEADER])))
      throw refuse(`send the session's CSRF token (GET /dashboard/api/session) in ${CSRF_HEADER}`);
    if (
      session.twoFactorRequired &&
      !session.twoFactorEnabled &&
      request.routeOptions.config.dashboardAccess !== 'enrolment'
    )
      throw new AppError(
        'two_factor_required',
        session.operator
          ? 'operators must sign in with two factors: turn them on in Settings before anything else'
          : 'this account requires two-factor sign-in: turn it on in Settings before anything else',
      );
    request.dashboardSession = session;
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The signed-in person of a route that needs a session, whatever account it acts in (if any). */
export function requirePerson(request: FastifyRequest): PersonSession {
  if (request.dashboardSession === null)
    throw new Error(`dashboard route ${request.routeOptions.url ?? ''} is public but reads the session`);
  return request.dashboardSession;
}

/**
 * The signed-in member of an account-scoped route: the session and the account it acts in. 403
 * `insufficient_permissions` for a session in no account (an operator who belongs to none).
 */
export function requireSession(request: FastifyRequest): DashboardSession {
  const session = requirePerson(request);
  if (!actsInAccount(session))
    throw new AppError('insufficient_permissions', 'you are not a member of any account');
  return session;
}

/**
 * The signed-in operator (`mailverdict operators add`) of an operator route. Anyone else who is
 * signed in gets 404 `not_found`, as for a route that does not exist: the operator's routes are
 * not advertised to members. (Without a session the guard has answered 401 already, as for every
 * dashboard route.) The guard has also made sure the operator has two factors.
 */
export function requireOperator(request: FastifyRequest): PersonSession {
  const session = requirePerson(request);
  if (!session.operator)
    throw new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
  return session;
}

export function setSessionCookie(reply: FastifyReply, deps: GuardDeps, session: NewSession, now: Date): void {
  void reply.setCookie(deps.cookie.name, session.secret, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: deps.cookie.secure,
    maxAge: Math.max(0, Math.floor((new Date(session.expiresAt).getTime() - now.getTime()) / 1000)),
  });
}

/**
 * The device cookie (services/people/sign-in-device.ts): `mv_device`, or `__Host-mv_device` with an
 * https public base URL, HttpOnly, SameSite=Lax, kept across sign-outs.
 */
export function deviceCookieName(deps: GuardDeps): string {
  return deps.cookie.secure ? '__Host-mv_device' : 'mv_device';
}

export function setDeviceCookie(reply: FastifyReply, deps: GuardDeps, token: string): void {
  void reply.setCookie(deviceCookieName(deps), token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: deps.cookie.secure,
    maxAge: Math.floor(DEVICE_COOKIE_MAX_AGE_MS / 1000),
  });
}

export function clearSessionCookie(reply: FastifyReply, deps: GuardDeps): void {
  void reply.clearCookie(deps.cookie.name, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: deps.cookie.secure,
  });
}
