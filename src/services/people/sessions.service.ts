/**
 * Dashboard sign-in and sessions (docs/dashboard.md). A session is a row in the store, so every
 * API process knows it; the browser holds its secret (32 random bytes) in an HttpOnly cookie and
 * the store only its SHA-256. A session ends after `sessionIdleTimeoutMs` without a request
 * (last use recorded at most once a minute, so it may end up to a minute early) or
 * `sessionMaxAgeMs` after sign-in, at sign-out, and when its person's password is reset. Each
 * sign-in makes a new session.
 *
 * A session is a person's and acts in one of their accounts at a time (its current membership,
 * issue 16 "People in several accounts"): sign-in starts in the person's oldest membership,
 * `switchAccount` moves it to another of theirs, and every account-scoped route reads the account
 * from it. When the current membership is removed, the session's next request moves to another
 * membership of the person, or ends when none is left, unless the person is an operator or has an
 * invitation to accept (the session then acts in no account and reaches only what is the
 * person's: accepting the invitation, two factors, the password, and an operator's routes).
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
 * with them and is capped at `MAX_SIGN_IN_DELAY_MS` (issue 16), except from a browser that has
 * signed in as the person before (its device cookie, sign-in-device.ts), whose password is also
 * checked in the hash queue's first lane (passwords.ts). After `SIGN_IN_CHALLENGE_AFTER`
 * failures of a pair, its next attempts need a solved proof-of-work challenge first (428
 * `challenge_required`, services/people/sign-in-challenge.ts), checked before the password, so a right
 * password without it is refused the same as a wrong one. Unknown address and wrong
 * password get the same 401 `invalid_credentials`, after the same scrypt work.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MINUTE, type Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import { hasUsableInvitation } from '../../store/member.store.js';
import {
  findPersonByEmail,
  findPersonById,
  listPersonMemberships,
  setPersonPassword,
} from '../../store/person.store.js';
import type { MembershipWithAccount } from '../../store/person.store.js';
import type { MemberRole, PersonRow } from '../../store/schema/dashboard.schema.js';
import {
  deleteExpiredSessions,
  deleteOldSignInFailures,
  deleteSession,
  findSessionWithPerson,
  insertSession,
  setSessionMember,
  touchSession,
  type SessionWithPerson,
} from '../../store/session.store.js';
import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  FAILURE_WINDOW_MS,
  countAttempts,
  failureKey,
  forgetAttempts,
  recordAttempt,
  reserveAttempt,
} from './failure-budget.js';
import { recordPersonAudit, shortenUserAgent, type AuditOrigin } from '../accounts/audit.service.js';
import { spendSignInChallenge } from './sign-in-challenge.js';
import { isDeviceOf } from './sign-in-device.js';
import { normalizeEmail } from './members.service.js';
import { dummyHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';
import { clientKey } from '../usage/rate-limit.js';

/** A session's last use is written at most this often (a polling page does not write per request). */
export const TOUCH_INTERVAL_MS = MINUTE;

export type SessionSettings = Pick<
  Config,
  'sessionIdleTimeoutMs' | 'sessionMaxAgeMs' | 'signInRateLimit' | 'signInFailureLimit'
>;

/**
 * The signed-in person of a request and the account the session acts in, as the session row and
 * its joins tell. The account's fields are null when the session acts in none (an operator who
 * belongs to no account); `DashboardSession` is the same with an account.
 */
export interface PersonSession {
  /** The stored id (SHA-256 of the secret). */
  sessionId: string;
  personId: string;
  email: string;
  /** Whether the person is an operator (`mailverdict operators add`). */
  operator: boolean;
  expiresAt: string;
  csrfToken: string;
  /** Whether the person signs in with two factors. */
  twoFactorEnabled: boolean;
  /**
   * Whether two factors are required where the session acts (the current account requires them,
   * or the person is an operator): without them, the person may only enrol.
   */
  twoFactorRequired: boolean;
  /** The current membership. */
  memberId: string | null;
  accountId: string | null;
  role: MemberRole | null;
  memberCreatedAt: string | null;
  joinedAt: string | null;
  accountPlan: string | null;
  accountEmail: string | null;
}

/** A session acting in an account: what every account-scoped route is confined to. */
export interface DashboardSession extends PersonSession {
  memberId: string;
  accountId: string;
  role: MemberRole;
  memberCreatedAt: string;
  accountPlan: string;
  accountEmail: string;
}

export function actsInAccount(session: PersonSession): session is DashboardSession {
  return session.accountId !== null && session.memberId !== null;
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

/** Opens a session for the person, acting in `memberId`'s account (null: in none). */
export async function createSession(
  db: Executor,
  clock: Clock,
  settings: SessionSettings,
  personId: string,
  memberId: string | null,
  /** Where the browser signed in from, listed on the sessions page (session-list.service.ts). */
  origin?: AuditOrigin,
): Promise<NewSession> {
  const now = clock.now();
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + settings.sessionMaxAgeMs).toISOString();
  await insertSession(db, {
    id: sessionIdOf(secret),
    person_id: personId,
    member_id: memberId,
    created_at: now.toISOString(),
    last_seen_at: now.toISOString(),
    expires_at: expiresAt,
    user_agent: shortenUserAgent(origin?.userAgent),
    client_ip: origin?.clientIp ?? null,
  });
  return { secret, expiresAt };
}

const NO_ACCOUNT = 'you are not a member of any account; ask an account owner to invite you';

/**
 * The session a cookie's secret opens; 401 `unauthenticated` when none, or when it has expired,
 * or when its person belongs to no account any more (and is no operator).
 */
export async function authenticateSession(
  db: Executor,
  clock: Clock,
  settings: SessionSettings,
  secret: string | undefined,
): Promise<PersonSession> {
  if (secret === undefined || secret === '')
    throw new AppError('unauthenticated', 'sign in to use the dashboard');
  const id = sessionIdOf(secret);
  let row = await findSessionWithPerson(db, id);
  const now = clock.now();
  const nowIso = now.toISOString();
  if (!row) throw new AppError('unauthenticated', 'the session has ended; sign in again');
  const idleFor = now.getTime() - new Date(row.last_seen_at).getTime();
  if (nowIso >= row.expires_at || idleFor >= settings.sessionIdleTimeoutMs) {
    await deleteSession(db, id);
    throw new AppError('unauthenticated', 'the session has expired; sign in again');
  }
  if (row.account_id === null || row.joined_at === null) row = await moveToAnotherAccount(db, clock, row);
  if (idleFor >= TOUCH_INTERVAL_MS) await touchSession(db, id, nowIso);
  const operator = row.operator_since !== null;
  return {
    sessionId: id,
    personId: row.person_id,
    email: row.email,
    operator,
    expiresAt: row.expires_at,
    csrfToken: csrfTokenFor(secret),
    twoFactorEnabled: row.two_factor_enabled_at !== null,
    twoFactorRequired: operator || Number(row.require_two_factor ?? 0) === 1,
    memberId: row.account_id === null ? null : row.member_id,
    accountId: row.account_id,
    role: row.role,
    memberCreatedAt: row.member_created_at,
    joinedAt: row.joined_at,
    accountPlan: row.account_plan,
    accountEmail: row.account_email,
  };
}

/**
 * A session whose current membership is gone: it moves to the person's oldest remaining one; with
 * none left it ends, unless the person is an operator (it then acts in no account).
 */
async function moveToAnotherAccount(
  db: Executor,
  clock: Clock,
  row: SessionWithPerson,
): Promise<SessionWithPerson> {
  const [next] = await listPersonMemberships(db, row.person_id);
  if (next === undefined) {
    if (await mayActInNoAccount(db, clock, row.person_id, row.operator_since)) {
      if (row.member_id !== null) await setSessionMember(db, row.id, null);
      return { ...row, member_id: null, account_id: null, role: null, joined_at: null };
    }
    await deleteSession(db, row.id);
    throw new AppError('unauthenticated', NO_ACCOUNT);
  }
  await setSessionMember(db, row.id, next.member_id);
  const moved = await findSessionWithPerson(db, row.id);
  if (!moved) throw new AppError('unauthenticated', 'the session has ended; sign in again');
  return moved;
}

/** The person's accounts, as the account switcher lists them. */
export async function listMemberships(db: Executor, personId: string): Promise<MembershipWithAccount[]> {
  return listPersonMemberships(db, personId);
}

/**
 * Moves the session to the person's membership of `accountId`: from the next request on, every
 * route is confined to that account. 404 `not_found` for an account they are not a member of
 * (another account's id and an unknown one alike).
 */
export async function switchAccount(
  db: Executor,
  session: Pick<PersonSession, 'sessionId' | 'personId'>,
  accountId: string,
): Promise<void> {
  const membership = (await listPersonMemberships(db, session.personId)).find(
    (m) => m.account_id === accountId,
  );
  if (!membership) throw new AppError('not_found', `no account ${accountId}`);
  await setSessionMember(db, session.sessionId, membership.member_id);
}

/** `startingMembership` of the person with this id (after a sign-in's second factor). */
export async function startingMembershipOf(
  db: Executor,
  clock: Clock,
  personId: string,
): Promise<string | null> {
  const person = await findPersonById(db, personId);
  if (!person) throw new AppError('unauthenticated', 'this sign-in has expired; sign in again');
  return startingMembership(db, clock, person);
}

/**
 * Whether a person in no account may hold a session: an operator, or someone with an invitation
 * to accept (who signs in to accept it: a link never sets an existing person's password).
 */
async function mayActInNoAccount(
  db: Executor,
  clock: Clock,
  personId: string,
  operatorSince: string | null,
): Promise<boolean> {
  return operatorSince !== null || (await hasUsableInvitation(db, personId, clock.now().toISOString()));
}

/**
 * Where a new session of the person starts: their oldest membership; null (no account) for an
 * operator or a person with an invitation to accept; 403 `insufficient_permissions` otherwise.
 */
export async function startingMembership(
  db: Executor,
  clock: Clock,
  person: PersonRow,
): Promise<string | null> {
  const [first] = await listPersonMemberships(db, person.id);
  if (first !== undefined) return first.member_id;
  if (await mayActInNoAccount(db, clock, person.id, person.operator_since)) return null;
  throw new AppError('insufficient_permissions', NO_ACCOUNT);
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
/**
 * Failed sign-ins for one (address, client address) pair in a window after which each further
 * attempt from that pair needs a solved proof-of-work challenge (428 `challenge_required`).
 */
export const SIGN_IN_CHALLENGE_AFTER = 3;
/** Failures for an address (from any client) in a window before its sign-ins are slowed. */
export const SIGN_IN_DELAY_AFTER = 3;

/** The delay before checking a password for an address with `failures` recent failures. */
export function signInDelayMs(failures: number): number {
  if (failures < SIGN_IN_DELAY_AFTER) return 0;
  return Math.min(MAX_SIGN_IN_DELAY_MS, 250 * 2 ** (failures - SIGN_IN_DELAY_AFTER));
}

/**
 * Checks an address and password (see the module comment for the limits and the identical
 * answer to an unknown address and a wrong password); the caller opens the session (or, for a
 * person with two factors, a challenge first) and records the sign-in once it is complete. A
 * correct password of a person who belongs to no account (and is no operator) is refused with
 * 403 `insufficient_permissions`, which says no more than that.
 */
export async function signIn(
  deps: SignInDeps,
  input: {
    email: string;
    password: string;
    clientIp: string;
    userAgent?: string | null;
    /** The sign-in page's solved proof of work (sign-in-challenge.ts), once one is required. */
    altcha?: string;
    /** The browser's device token (sign-in-device.ts), when it has one. */
    device?: string;
  },
): Promise<{ person: PersonRow; memberId: string | null }> {
  const { db, clock, settings } = deps;
  let email: string;
  try {
    email = normalizeEmail(input.email);
  } catch {
    // Not even an address: no person can have it, but it costs the same as one that could.
    await verifyPassword(input.password, await dummyHash());
    throw new AppError('invalid_credentials', INVALID_CREDENTIALS);
  }
  const now = clock.now();
  const pairKey = failureKey(`sign-in:${email}\n${clientKey(input.clientIp)}`);
  const addressKey = failureKey(email);
  const budget = {
    limit: settings.signInFailureLimit,
    windowMs: FAILURE_WINDOW_MS,
    what: 'failed sign-ins for this address from this client',
  };
  // The proof of work comes before the budget and the hash: a refused attempt costs neither the
  // pair's budget nor the server's CPU, and says nothing of the password.
  // (Past the budget, the 429 comes without asking for work that could not help.)
  const counted = budget.limit > 0 ? await countAttempts(db, pairKey, now, budget.windowMs) : 0;
  const challenged = counted >= SIGN_IN_CHALLENGE_AFTER && counted < budget.limit;
  if (challenged) await spendSignInChallenge(db, clock, input.altcha);
  const reserved = await reserveAttempt(db, pairKey, budget, now);
  // A burst that all counted before any was reserved: those past the threshold need the work too.
  if (!challenged && reserved > SIGN_IN_CHALLENGE_AFTER) await spendSignInChallenge(db, clock, input.altcha);
  const person = await findPersonByEmail(db, email);
  // A browser that completed a sign-in as this person before is not slowed by failures from
  // elsewhere (sign-in-device.ts).
  const known = person !== undefined && (await isDeviceOf(db, clock, person, input.device));
  const delay = known ? 0 : signInDelayMs(await countAttempts(db, addressKey, now));
  if (delay > 0) await (deps.sleep ?? sleepFor)(delay);
  const stored = person?.password_hash ?? (await dummyHash());
  const matches = await verifyPassword(input.password, stored, known ? 'first' : 'others');
  const origin: AuditOrigin = { clientIp: input.clientIp, userAgent: input.userAgent ?? null };
  if (!person || person.password_hash === null || !matches) {
    await recordAttempt(db, addressKey, now);
    // In the security log of every account the person has joined (none for an unknown address).
    if (person) await recordPersonAudit(db, clock, person, { type: 'sign_in_failed', origin });
    throw new AppError('invalid_credentials', INVALID_CREDENTIALS);
  }
  await forgetAttempts(db, pairKey);
  await forgetAttempts(db, addressKey);
  if (needsRehash(person.password_hash))
    await setPersonPassword(db, person.id, await hashPassword(input.password));
  // Housekeeping rides on sign-ins: ended sessions and old failure windows do not pile up.
  await deleteExpiredSessions(
    db,
    now.toISOString(),
    new Date(now.getTime() - settings.sessionIdleTimeoutMs).toISOString(),
  );
  await deleteOldSignInFailures(db, new Date(now.getTime() - 4 * FAILURE_WINDOW_MS).toISOString());
  return { person, memberId: await startingMembership(db, clock, person) };
}
