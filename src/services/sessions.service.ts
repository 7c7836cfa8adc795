/**
 * Dashboard sign-in and sessions (docs/dashboard.md). A session is a row in the store, so every
 * API process knows it; the browser holds its secret (32 random bytes) in an HttpOnly cookie and
 * the store only its SHA-256. A session ends after `sessionIdleTimeoutMs` without a request
 * (last use recorded at most once a minute, so it may end up to a minute early) or
 * `sessionMaxAgeMs` after sign-in, at sign-out, when its member is removed, and when the
 * member's password is reset. Each sign-in makes a new session.
 *
 * The CSRF token of a session is HMAC-SHA256(secret, "csrf"): only the session's own browser can
 * know it (it reads it from GET /session), nothing needs storing, and knowing it does not reveal
 * the cookie.
 *
 * Sign-in is refused with 429 `rate_limit_exceeded` past `signInFailureLimit` failures for one
 * (address, client address) pair in a 15-minute window, reserved before the hash (counted in the
 * store, so every process sees them; the per-client limit on all attempts is the edge's,
 * src/dashboard/routes/session.routes.ts). Nobody can lock a person out from elsewhere: the
 * failures for an address from every client only slow its sign-ins down, by a delay that grows
 * with them and is capped at `MAX_SIGN_IN_DELAY_MS` (issue 16). Unknown address and wrong
 * password get the same 401 `invalid_credentials`, after the same scrypt work.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MINUTE, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Executor } from '../store/executor.js';
import { findMemberByEmail, setMemberPassword } from '../store/member.store.js';
import type { MemberRole, MemberRow } from '../store/schema/dashboard.schema.js';
import {
  deleteExpiredSessions,
  deleteOldSignInFailures,
  deleteSession,
  findSessionWithMember,
  insertSession,
  touchSession,
} from '../store/session.store.js';
import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  FAILURE_WINDOW_MS,
  countAttempts,
  failureKey,
  forgetAttempts,
  recordAttempt,
  reserveAttempt,
} from './failure-budget.js';
import { recordAudit, shortenUserAgent, type AuditOrigin } from './audit.service.js';
import { normalizeEmail } from './members.service.js';
import { dummyHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';

/** A session's last use is written at most this often (a polling page does not write per request). */
export const TOUCH_INTERVAL_MS = MINUTE;

export type SessionSettings = Pick<
  Config,
  'sessionIdleTimeoutMs' | 'sessionMaxAgeMs' | 'signInRateLimit' | 'signInFailureLimit'
>;

/** The signed-in member of a request, as the session row and its joins tell. */
export interface DashboardSession {
  /** The stored id (SHA-256 of the secret). */
  sessionId: string;
  memberId: string;
  accountId: string;
  email: string;
  role: MemberRole;
  memberCreatedAt: string;
  joinedAt: string | null;
  accountPlan: string;
  accountEmail: string;
  expiresAt: string;
  csrfToken: string;
  /** Whether the member signs in with two factors. */
  twoFactorEnabled: boolean;
  /** Whether the account requires two factors: without them, the member may only enrol. */
  twoFactorRequired: boolean;
  /** Whether the person is an operator (docs/operators.md); set by operator sign-in. */
  operator?: boolean;
}

function sessionIdOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function csrfTokenFor(secret: string): string {
  return createHmac('sha256', secret).update('csrf').digest('base64url');
}

/** Whether `presented` is the session's CSRF token, compared in constant time. */
export function csrfTokenMatches(secret: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const expected = Buffer.from(csrfTokenFor(secret));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface NewSession {
  /** The cookie's value: shown to the browser once, never stored. */
  secret: string;
  expiresAt: string;
}

/** Opens a session for the member. */
export async function createSession(
  db: Executor,
  clock: Clock,
  settings: SessionSettings,
  memberId: string,
  /** Where the browser signed in from, listed on the sessions page (session-list.service.ts). */
  origin?: AuditOrigin,
): Promise<NewSession> {
  const now = clock.now();
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + settings.sessionMaxAgeMs).toISOString();
  await insertSession(db, {
    id: sessionIdOf(secret),
    member_id: memberId,
    created_at: now.toISOString(),
    last_seen_at: now.toISOString(),
    expires_at: expiresAt,
    user_agent: shortenUserAgent(origin?.userAgent),
    client_ip: origin?.clientIp ?? null,
  });
  return { secret, expiresAt };
}

/** The session a cookie's secret opens; 401 `unauthenticated` when none, or when it has expired. */
export async function authenticateSession(
  db: Executor,
  clock: Clock,
  settings: SessionSettings,
  secret: string | undefined,
): Promise<DashboardSession> {
  if (secret === undefined || secret === '')
    throw new AppError('unauthenticated', 'sign in to use the dashboard');
  const id = sessionIdOf(secret);
  const row = await findSessionWithMember(db, id);
  const now = clock.now();
  const nowIso = now.toISOString();
  if (!row) throw new AppError('unauthenticated', 'the session has ended; sign in again');
  const idleFor = now.getTime() - new Date(row.last_seen_at).getTime();
  if (nowIso >= row.expires_at || idleFor >= settings.sessionIdleTimeoutMs) {
    await deleteSession(db, id);
    throw new AppError('unauthenticated', 'the session has expired; sign in again');
  }
  if (idleFor >= TOUCH_INTERVAL_MS) await touchSession(db, id, nowIso);
  return {
    sessionId: id,
    memberId: row.member_id,
    accountId: row.account_id,
    email: row.email,
    role: row.role,
    memberCreatedAt: row.member_created_at,
    joinedAt: row.joined_at,
    accountPlan: row.account_plan,
    accountEmail: row.account_email,
    expiresAt: row.expires_at,
    csrfToken: csrfTokenFor(secret),
    twoFactorEnabled: row.two_factor_enabled_at !== null,
    twoFactorRequired: Number(row.require_two_factor) === 1,
  };
}

/** Ends the session a cookie's secret opens (sign-out); nothing when there is none. */
export async function endSession(db: Executor, secret: string | undefined): Promise<void> {
  if (secret === undefined || secret === '') return;
  await deleteSession(db, sessionIdOf(secret));
}

export interface SignInDeps {
  db: Executor;
  clock: Clock;
  settings: SessionSettings;
  /** Waits the per-address delay (tests record it instead). */
  sleep?: (ms: number) => Promise<unknown>;
}

const INVALID_CREDENTIALS = 'the e-mail address or the password is not correct';

/** The longest an address's failures from elsewhere can make its sign-in wait. */
export const MAX_SIGN_IN_DELAY_MS = 3_000;
/** Failures for an address (from any client) in a window before its sign-ins are slowed. */
export const SIGN_IN_DELAY_AFTER = 3;

/** The delay before checking a password for an address with `failures` recent failures. */
export function signInDelayMs(failures: number): number {
  if (failures < SIGN_IN_DELAY_AFTER) return 0;
  return Math.min(MAX_SIGN_IN_DELAY_MS, 250 * 2 ** (failures - SIGN_IN_DELAY_AFTER));
}

/**
 * Checks an address and password (see the module comment for the limits and the identical
 * answer to an unknown address and a wrong password); the caller opens the session.
 */
export async function signIn(
  deps: SignInDeps,
  input: { email: string; password: string; clientIp: string; userAgent?: string | null },
): Promise<{ member: MemberRow }> {
  const { db, clock, settings } = deps;
  let email: string;
  try {
    email = normalizeEmail(input.email);
  } catch {
    // Not even an address: no member can have it, but it costs the same as one that could.
    await verifyPassword(input.password, await dummyHash());
    throw new AppError('invalid_credentials', INVALID_CREDENTIALS);
  }
  const now = clock.now();
  const pairKey = failureKey(`sign-in:${email}\n${input.clientIp}`);
  const addressKey = failureKey(email);
  await reserveAttempt(
    db,
    pairKey,
    {
      limit: settings.signInFailureLimit,
      windowMs: FAILURE_WINDOW_MS,
      what: 'failed sign-ins for this address from this client',
    },
    now,
  );
  const delay = signInDelayMs(await countAttempts(db, addressKey, now));
  if (delay > 0) await (deps.sleep ?? sleepFor)(delay);
  const member = await findMemberByEmail(db, email);
  const stored = member?.password_hash ?? (await dummyHash());
  const matches = await verifyPassword(input.password, stored);
  const origin: AuditOrigin = { clientIp: input.clientIp, userAgent: input.userAgent ?? null };
  if (!member || member.password_hash === null || !matches) {
    await recordAttempt(db, addressKey, now);
    // In the account's security log only when the address is one of its members'.
    if (member)
      await recordAudit(db, clock, {
        accountId: member.account_id,
        type: 'sign_in_failed',
        actor: { kind: 'member', memberId: member.id, email: member.email },
        origin,
      });
    throw new AppError('invalid_credentials', INVALID_CREDENTIALS);
  }
  await forgetAttempts(db, pairKey);
  await forgetAttempts(db, addressKey);
  if (needsRehash(member.password_hash))
    await setMemberPassword(db, member.id, await hashPassword(input.password), now.toISOString());
  // Housekeeping rides on sign-ins: ended sessions and old failure windows do not pile up.
  await deleteExpiredSessions(
    db,
    now.toISOString(),
    new Date(now.getTime() - settings.sessionIdleTimeoutMs).toISOString(),
  );
  await deleteOldSignInFailures(db, new Date(now.getTime() - 4 * FAILURE_WINDOW_MS).toISOString());
  await recordAudit(db, clock, {
    accountId: member.account_id,
    type: 'sign_in',
    actor: { kind: 'member', memberId: member.id, email: member.email },
    origin,
  });
  // No session here: the caller opens one, or, for a member with two factors, a challenge first.
  return { member };
}
