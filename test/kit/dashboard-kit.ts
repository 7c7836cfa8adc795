/**
 * The jobs harness (a real app on a real store, a worker, `app.inject()`) plus what a browser
 * does with the dashboard: it keeps the session cookie, sends the CSRF token on every
 * state-changing request and its own Origin. Members are made the way people get in: an
 * invitation, then its link accepted with a password.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createMemoryRateLimiter } from '../../src/services/usage/rate-limit.js';
import { ManualClock } from '../../src/clock.js';
import { buildHttpApp } from '../../src/runtime.js';
import {
  issueInvitation,
  acceptLink,
  joinWithInvitation,
} from '../../src/services/people/members.service.js';
import { addOperator } from '../../src/services/operators/operators.service.js';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import type { TwoFactorEnrolment } from '../../src/dashboard/contract.js';
import { isAppError } from '../../src/errors.js';
import type { SessionView } from '../../src/dashboard/contract.js';
import type { OperatorConsoleOptions } from '../../src/dashboard/deps.js';
import { createJobsHarness, type JobsHarness, type JobsHarnessOptions } from './jobs-kit.js';

export const API = '/dashboard/api';
export const PASSWORD = 'correct horse battery';

export interface Browser {
  /** The session cookie's value, as the browser holds it; null when it has none. */
  cookie: string | null;
  csrf: string | null;
  request(
    method: InjectOptions['method'],
    path: string,
    options?: {
      body?: unknown;
      headers?: Record<string, string>;
      /** Leave out the CSRF token. */
      noCsrf?: boolean;
      /** Raw payload and its Content-Type instead of JSON. */
      raw?: { type: string; payload: string | Buffer };
    },
  ): Promise<LightMyRequestResponse>;
  get(path: string): Promise<LightMyRequestResponse>;
  post(path: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** Signs in; throws unless it answers 200. */
  signIn(email: string, password?: string): Promise<SessionView>;
}

export interface DashboardHarnessOptions extends JobsHarnessOptions {
  /** The built app's directory (default: the package's dist/web). */
  webDir?: string;
  /** The operator console's collaborators (who is an operator, the egresses). */
  operatorConsole?: OperatorConsoleOptions;
}

export interface DashboardHarness extends JobsHarness {
  /**
   * The app every request of the kit goes through: the harness's store, with a rate limiter on
   * the harness's ManualClock (its windows move only when a test moves the clock).
   */
  app: FastifyInstance;
  /** A v1 request with an API key, through the same app. */
  v1(
    method: InjectOptions['method'],
    url: string,
    key: string,
    body?: unknown,
  ): Promise<LightMyRequestResponse>;
  /** The public base URL's origin: what the browser sends as Origin. */
  origin: string;
  /** A browser with no cookie. */
  browser(): Browser;
  /**
   * Invites `email` to the account (default: the harness's) and accepts the link with `password`
   * (a person who has a password already joins without one). Returns the membership's id.
   */
  addMember(
    email: string,
    options?: { accountId?: string; role?: 'owner' | 'member'; password?: string },
  ): Promise<string>;
  /** A member of the harness's account, signed in. */
  signedIn(email?: string): Promise<{ browser: Browser; session: SessionView }>;
  /**
   * An operator as `mailverdict operators add` makes one: their link sets the password, they sign
   * in and turn on the second factor that operators must have. Belongs to no account.
   */
  signedInOperator(email: string): Promise<Browser>;
  manualClock: ManualClock;
}

export function sessionCookieOf(res: LightMyRequestResponse, name = 'mv_session'): string | undefined {
  const header = res.headers['set-cookie'];
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return all.find((c) => c.startsWith(`${name}=`));
}

export async function createDashboardHarness(
  options: DashboardHarnessOptions = {},
): Promise<DashboardHarness> {
  const clock =
    options.clock instanceof ManualClock ? options.clock : new ManualClock('2026-03-10T12:00:00.000Z');
  const h = await createJobsHarness({ ...options, clock });
  const app = buildHttpApp({
    ...h.runtime.ctx,
    rateLimiter: createMemoryRateLimiter({ clock }),
    ...(options.webDir === undefined ? {} : { webDir: options.webDir }),
    ...(options.operatorConsole === undefined ? {} : { operatorConsole: options.operatorConsole }),
  });
  await app.ready();
  const origin = new URL(h.runtime.ctx.config.publicBaseUrl).origin;
  const cookieName = origin.startsWith('https:') ? '__Host-mv_session' : 'mv_session';

  const browser = (): Browser => {
    const b: Browser = {
      cookie: null,
      csrf: null,
      async request(method, path, o = {}) {
        const headers: Record<string, string> = { origin, 'sec-fetch-site': 'same-origin', ...o.headers };
        if (b.cookie !== null) headers.cookie = `${cookieName}=${b.cookie}`;
        if (b.csrf !== null && !o.noCsrf && method !== 'GET') headers['x-csrf-token'] = b.csrf;
        let payload: string | Buffer | undefined;
        if (o.raw) {
          headers['content-type'] = o.raw.type;
          payload = o.raw.payload;
        } else if (o.body !== undefined) {
          headers['content-type'] = 'application/json';
          payload = JSON.stringify(o.body);
        }
        const res = await app.inject({
          method,
          url: path.startsWith('/') ? path : `${API}/${path}`,
          headers,
          ...(payload === undefined ? {} : { payload }),
        });
        const set = sessionCookieOf(res, cookieName);
        if (set !== undefined) {
          const value = set.slice(cookieName.length + 1).split(';')[0]!;
          b.cookie = value === '' || /max-age=0/i.test(set) ? null : value;
        }
        return res;
      },
      get: (path) => b.request('GET', path),
      post: (path, body) => b.request('POST', path, body === undefined ? {} : { body }),
      async signIn(email, password = PASSWORD) {
        const res = await b.post('session', { email, password });
        if (res.statusCode !== 200) throw new Error(`sign-in answered ${res.statusCode}: ${res.body}`);
        const view = res.json<SessionView>();
        b.csrf = view.csrf_token;
        return view;
      },
    };
    return b;
  };

  const addMember: DashboardHarness['addMember'] = async (email, o = {}) => {
    const { db } = h.runtime.ctx;
    const issued = await issueInvitation(db, clock, {
      accountId: o.accountId ?? h.accountId,
      email,
      ...(o.role === undefined ? {} : { role: o.role }),
    });
    try {
      const accepted = await acceptLink(db, clock, {
        token: issued.token,
        password: o.password ?? PASSWORD,
        kind: 'invitation',
      });
      return accepted.member!.id;
    } catch (err) {
      // A person of another account already: they join as they would signed in.
      if (!isAppError(err) || err.code !== 'unauthenticated') throw err;
      return (await joinWithInvitation(db, clock, { token: issued.token, personId: issued.personId })).id;
    }
  };

  return {
    ...h,
    app,
    inject: (o) => app.inject(o),
    v1: (method, url, key, body) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}` },
        ...(body === undefined ? {} : { payload: body as object }),
      }),
    async close() {
      await app.close();
      await h.close();
    },
    origin,
    browser,
    addMember,
    manualClock: clock,
    async signedIn(email = 'owner@example.org') {
      await addMember(email, { role: 'owner' });
      const b = browser();
      return { browser: b, session: await b.signIn(email) };
    },
    async signedInOperator(email) {
      const { db, config } = h.runtime.ctx;
      const silent = { warn: () => undefined, info: () => undefined };
      const added = await addOperator({ db, clock, config, mailer: null, logger: silent }, email);
      if (added.link === null) throw new Error(`${email} has a password already`);
      const set = await browser().post('password-resets/accept', {
        token: added.link.token,
        password: PASSWORD,
      });
      if (set.statusCode !== 200)
        throw new Error(`the operator's link answered ${set.statusCode}: ${set.body}`);
      const b = browser();
      await b.signIn(email);
      const started = await b.post('account/two-factor/enrolment');
      const { secret } = started.json<TwoFactorEnrolment>();
      const confirmed = await b.post('account/two-factor/enrolment/confirm', {
        code: totpCode(secret, clock.now()),
        password: PASSWORD,
      });
      if (confirmed.statusCode !== 200) throw new Error(`enrolment answered ${confirmed.statusCode}`);
      return b;
    },
  };
}

/** The dashboard's error envelope of a response. */
export function errorCode(res: LightMyRequestResponse): string {
  return res.json<{ error: string }>().error;
}
