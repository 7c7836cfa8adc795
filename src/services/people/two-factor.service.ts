/**
 * Two-factor sign-in (issue 16; docs/dashboard.md, "Two-factor sign-in"): TOTP (RFC 6238: SHA-1,
 * 6 digits, 30-second steps, one step of drift either way) through `otpauth`, ten single-use
 * recovery codes, the challenge between a correct password and the second factor, and the
 * account's requirement of two factors.
 *
 * - The secret is made here (20 random bytes, RFC 4226's recommended length), shown once at
 *   enrolment as a QR code (an SVG made here, nothing fetched) and in base32, and never again.
 * - A code is taken once: the last accepted time step is stored and a code of that step or an
 *   earlier one is refused, in one conditional update (two requests with one code: one wins).
 * - A second factor is a person's (issue 16, "People in several accounts"): one for every account
 *   they belong to. An account's requirement applies while the person acts in that account.
 * - Wrong codes are counted per person (`failure-budget.ts`), reserved before the check, with the
 *   sign-in failure limit in the same 15-minute windows.
 * - Time is the injected clock's, so tests compute codes at the instant the server checks them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { MINUTE, type Clock } from '../../clock.js';
import { AppError, isAppError } from '../../errors.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import {
  findPersonByEmail,
  findPersonById,
  listPersonMemberships,
  type MembershipWithAccount,
} from '../../store/person.store.js';
import type { PersonRow } from '../../store/schema/dashboard.schema.js';
import { deletePersonSessions } from '../../store/session.store.js';
import {
  accountRequiresTwoFactor,
  countUnusedRecoveryCodes,
  deleteChallenge,
  deleteExpiredChallenges,
  deleteTwoFactor,
  findChallenge,
  findTwoFactor,
  insertChallenge,
  replaceRecoveryCodes,
  savePendingSecret,
  setAccountRequiresTwoFactor,
  takeStep,
  useRecoveryCode,
} from '../../store/two-factor.store.js';
import { BY_OPERATOR, recordAudit, type PersonChangeLog } from '../accounts/audit.service.js';
import { FAILURE_WINDOW_MS, failureKey, forgetAttempts, reserveAttempt } from './failure-budget.js';
import { normalizeEmail } from './members.service.js';
import { verifyPassword } from './passwords.js';

const PERIOD_S = 30;
const DIGITS = 6;
/** Steps of drift accepted either side of now (a phone's clock half a minute off still works). */
const WINDOW = 1;
const ISSUER = 'mailverdict';
/** How long the second step may follow the password. */
export const CHALLENGE_TTL_MS = 5 * MINUTE;
export const RECOVERY_CODE_COUNT = 10;
/** Crockford's base32 (no i, l, o, u): 16 characters are 80 random bits. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

const WRONG_CODE = 'the code is not correct (or was used already); try the next one';

/** The TOTP code of `secret` at `at` (tests and the CLI's users compute codes the same way). */
export function totpCode(secret: string, at: Date): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    digits: DIGITS,
    period: PERIOD_S,
    timestamp: at.getTime(),
  });
}

/** The time step a code of `secret` belongs to, near `now`; null when it matches none. */
function matchingStep(secret: string, code: string, now: Date): number | null {
  const timestamp = now.getTime();
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secret),
    digits: DIGITS,
    period: PERIOD_S,
    timestamp,
    window: WINDOW,
  });
  return delta === null ? null : TOTP.counter({ period: PERIOD_S, timestamp }) + delta;
}

/**
 * Recovery codes are 80 random bits each, so a plain SHA-256 is enough to store them: no
 * dictionary or brute force reaches 2^80 guesses, which is what a slow, salted hash (scrypt, as
 * for passwords people choose) would guard against. A fast hash also lets the code be found by
 * an index lookup.
 */
function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(normalizeRecoveryCode(code)).digest('hex');
}

function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[^0-9a-z]/g, '');
}

function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b & 31]!).join('');
  return chars.match(/.{4}/g)!.join('-');
}

function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s/g, ''));
}

export interface TwoFactorStatus {
  enabled: boolean;
  enabled_at: string | null;
  recovery_codes_left: number;
  account_requires: boolean;
}

export async function twoFactorStatus(
  db: Executor,
  member: { personId: string; accountId: string | null; operator: boolean },
): Promise<TwoFactorStatus> {
  const row = await findTwoFactor(db, member.personId);
  const enabledAt = row?.enabled_at ?? null;
  return {
    enabled: enabledAt !== null,
    enabled_at: enabledAt,
    recovery_codes_left: enabledAt === null ? 0 : await countUnusedRecoveryCodes(db, member.personId),
    // An operator must keep two factors, as if every account required them.
    account_requires:
      member.operator ||
      (member.accountId !== null && (await accountRequiresTwoFactor(db, member.accountId))),
  };
}

/** The person's recovery codes not used yet. */
export async function countRecoveryCodes(db: Executor, personId: string): Promise<number> {
  return countUnusedRecoveryCodes(db, personId);
}

/** Whether the member signs in with two factors. */
export async function hasTwoFactor(db: Executor, personId: string): Promise<boolean> {
  return ((await findTwoFactor(db, personId))?.enabled_at ?? null) !== null;
}

export interface Enrolment {
  /** Base32, for typing into an authenticator app. */
  secret: string;
  otpauth_uri: string;
  /** The URI as a QR code: an SVG document. */
  qr_svg: string;
}

/**
 * Starts turning TOTP on: a new secret, kept pending until `confirmEnrolment` sees a first
 * valid code. Starting again replaces a pending secret; 422 when TOTP is on already.
 */
export async function startEnrolment(
  db: Executor,
  clock: Clock,
  member: { personId: string; email: string },
): Promise<Enrolment> {
  const secret = new Secret({ size: 20 }).base32;
  if (!(await savePendingSecret(db, member.personId, secret, clock.now().toISOString())))
    throw new AppError('invalid_request', 'two-factor sign-in is on already; turn it off first');
  const uri = new TOTP({
    issuer: ISSUER,
    label: member.email,
    secret: Secret.fromBase32(secret),
    digits: DIGITS,
    period: PERIOD_S,
  }).toString();
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, otpauth_uri: uri, qr_svg: svg };
}

interface CodeCheck {
  personId: string;
  code: string;
  failureLimit: number;
}

/** One attempt of the member's second-factor budget, before the code is checked. */
async function reserveCodeAttempt(db: Executor, clock: Clock, input: CodeCheck): Promise<string> {
  const key = failureKey(`second-factor:${input.personId}`);
  await reserveAttempt(
    db,
    key,
    { limit: input.failureLimit, windowMs: FAILURE_WINDOW_MS, what: 'wrong two-factor codes' },
    clock.now(),
  );
  return key;
}

/**
 * The person's own password, asked before turning two factors on or off: checked under the same
 * budget as a password change's (a session left open elsewhere cannot guess it). 401
 * `invalid_credentials` when wrong.
 */
async function checkOwnPassword(
  db: Executor,
  clock: Clock,
  input: { personId: string; password: string; failureLimit: number },
): Promise<void> {
  const passwordKey = failureKey(`password-change:${input.personId}`);
  await reserveAttempt(
    db,
    passwordKey,
    { limit: input.failureLimit, windowMs: FAILURE_WINDOW_MS, what: 'wrong current passwords' },
    clock.now(),
  );
  const person = await findPersonById(db, input.personId);
  if (!person?.password_hash || !(await verifyPassword(input.password, person.password_hash)))
    throw new AppError('invalid_credentials', 'the password is not correct');
  await forgetAttempts(db, passwordKey);
}

/**
 * Confirms an enrolment with the person's password and the first valid code: TOTP is on, and the
 * ten recovery codes are returned, this once (only their hashes are kept). The password first: a
 * stolen session cannot turn two factors on with its holder's secret and lock the person out
 * (issue 26).
 */
export async function confirmEnrolment(
  db: Executor,
  clock: Clock,
  input: CodeCheck & { password: string; log: PersonChangeLog },
): Promise<string[]> {
  await checkOwnPassword(db, clock, input);
  const key = await reserveCodeAttempt(db, clock, input);
  const row = await findTwoFactor(db, input.personId);
  if (!row || row.enabled_at !== null)
    throw new AppError('invalid_request', 'start turning two-factor sign-in on first');
  const now = clock.now();
  const step = matchingStep(row.secret, input.code.replace(/\s/g, ''), now);
  if (step === null) throw new AppError('invalid_credentials', WRONG_CODE);
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await inTransaction(db, async (trx) => {
    if (!(await takeStep(trx, input.personId, step, { now: now.toISOString() })))
      throw new AppError('invalid_credentials', WRONG_CODE);
    await replaceRecoveryCodes(trx, input.personId, codes.map(hashRecoveryCode), now.toISOString());
    if (input.log) await recordAudit(trx, clock, { ...input.log, type: 'two_factor_enabled' });
  });
  await forgetAttempts(db, key);
  return codes;
}

/** Which second factor a code is: an authenticator's TOTP code or a recovery code. */
export type SecondFactorKind = 'totp' | 'recovery_code';

export function secondFactorKind(code: string): SecondFactorKind {
  return isTotpCode(code) ? 'totp' : 'recovery_code';
}

/**
 * Checks a second factor of a member with TOTP on: a TOTP code not taken before, or an unused
 * recovery code (used up by this); which of the two passed. 401 `invalid_credentials` otherwise,
 * counted.
 */
export async function checkSecondFactor(
  db: Executor,
  clock: Clock,
  input: CodeCheck,
): Promise<SecondFactorKind> {
  const key = await reserveCodeAttempt(db, clock, input);
  const row = await findTwoFactor(db, input.personId);
  if (!row || row.enabled_at === null) throw new AppError('invalid_credentials', WRONG_CODE);
  const now = clock.now();
  const kind = secondFactorKind(input.code);
  let accepted: boolean;
  if (kind === 'totp') {
    const step = matchingStep(row.secret, input.code.replace(/\s/g, ''), now);
    accepted = step !== null && (await takeStep(db, input.personId, step, null));
  } else {
    accepted = await useRecoveryCode(db, input.personId, hashRecoveryCode(input.code), now.toISOString());
  }
  if (!accepted) throw new AppError('invalid_credentials', WRONG_CODE);
  await forgetAttempts(db, key);
  return kind;
}

/**
 * Turns TOTP off: needs the member's password and a current code (or a recovery code). Refused
 * (422) while the account requires two factors: the owner lifts that first, or the operator
 * resets the member (`mailverdict members reset-2fa`).
 */
export async function disableTwoFactor(
  db: Executor,
  clock: Clock,
  input: CodeCheck & { accountId: string | null; operator: boolean; password: string; log: PersonChangeLog },
): Promise<void> {
  if (input.operator)
    throw new AppError(
      'invalid_request',
      'an operator must sign in with two factors, so it cannot be turned off',
    );
  if (input.accountId !== null && (await accountRequiresTwoFactor(db, input.accountId)))
    throw new AppError(
      'invalid_request',
      'this account requires two-factor sign-in, so it cannot be turned off; the owner can lift the requirement',
    );
  // The password under its budget, then the code under its own.
  await checkOwnPassword(db, clock, input);
  await checkSecondFactor(db, clock, input);
  await inTransaction(db, async (trx) => {
    await deleteTwoFactor(trx, input.personId);
    if (input.log) await recordAudit(trx, clock, { ...input.log, type: 'two_factor_disabled' });
  });
}

/**
 * The operator's reset (CLI, `mailverdict members reset-2fa`): the member's second factor,
 * recovery codes and pending sign-ins are gone, and their sessions end. They sign in with the
 * password alone (or, when the account requires two factors, may then only turn them on again).
 * The second factor is the person's, so the reset is logged in every account they belong to, in
 * the reset's transaction. 404 for an unknown address.
 */
export async function resetTwoFactorByEmail(
  db: Executor,
  clock: Clock,
  email: string,
): Promise<{ person: PersonRow; hadTwoFactor: boolean; memberships: MembershipWithAccount[] }> {
  return inTransaction(db, async (trx) => {
    const person = await findPersonByEmail(trx, normalizeEmail(email));
    if (!person) throw new AppError('not_found', `${normalizeEmail(email)} is not a member of any account`);
    const hadTwoFactor = await deleteTwoFactor(trx, person.id);
    await deletePersonSessions(trx, person.id);
    const memberships = await listPersonMemberships(trx, person.id);
    for (const m of memberships)
      await recordAudit(trx, clock, {
        accountId: m.account_id,
        type: 'two_factor_reset',
        ...BY_OPERATOR,
        details: { member_id: m.member_id, had_two_factor: hadTwoFactor },
      });
    return { person, hadTwoFactor, memberships };
  });
}

/**
 * The owner requires two factors of every member (or lifts it). The owner must have TOTP on
 * first (422), so that requiring it never sends the owner to enrol.
 */
export async function setTwoFactorRequirement(
  db: Executor,
  member: { personId: string; accountId: string; role: 'owner' | 'member' },
  required: boolean,
): Promise<void> {
  if (member.role !== 'owner')
    throw new AppError('insufficient_permissions', "only the account's owner can require two factors");
  if (required && !(await hasTwoFactor(db, member.personId)))
    throw new AppError(
      'invalid_request',
      'turn on two-factor sign-in for yourself before requiring it of everyone',
    );
  if (!(await setAccountRequiresTwoFactor(db, member.accountId, required)))
    throw new AppError('not_found', `no account ${member.accountId}`);
}

function challengeId(challenge: string): string {
  return createHash('sha256').update(challenge).digest('hex');
}

/** The challenge a correct password earns a member with TOTP on: short-lived, single-use. */
export async function issueChallenge(
  db: Executor,
  clock: Clock,
  personId: string,
): Promise<{ challenge: string; expiresAt: string }> {
  const now = clock.now();
  await deleteExpiredChallenges(db, now.toISOString());
  const challenge = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString();
  await insertChallenge(db, {
    id: challengeId(challenge),
    person_id: personId,
    created_at: now.toISOString(),
    expires_at: expiresAt,
  });
  return { challenge, expiresAt };
}

const CHALLENGE_ENDED = 'this sign-in has expired or was completed already; sign in again';

/**
 * Completes a sign-in with its second factor: the member the challenge was issued to, whose code
 * is checked (and counted) as `checkSecondFactor` does, and which factor passed. The challenge is
 * used up by a success; a wrong code leaves it for another try until it expires, and is told to
 * `onWrongCode` (the security log and the person's e-mail, sign-in-alerts.ts) before the 401. 401
 * `unauthenticated` for a challenge that is unknown, expired or used, or ended by a new password.
 */
export async function completeChallenge(
  db: Executor,
  clock: Clock,
  input: {
    challenge: string;
    code: string;
    failureLimit: number;
    onWrongCode?: (personId: string, kind: SecondFactorKind) => Promise<void>;
  },
): Promise<{ personId: string; kind: SecondFactorKind }> {
  const id = challengeId(input.challenge);
  const personId = await findChallenge(db, id, clock.now().toISOString());
  if (personId === undefined) throw new AppError('unauthenticated', CHALLENGE_ENDED);
  let kind: SecondFactorKind;
  try {
    kind = await checkSecondFactor(db, clock, {
      personId,
      code: input.code,
      failureLimit: input.failureLimit,
    });
  } catch (err) {
    if (isAppError(err) && err.code === 'invalid_credentials')
      await input.onWrongCode?.(personId, secondFactorKind(input.code));
    throw err;
  }
  if (!(await deleteChallenge(db, id))) throw new AppError('unauthenticated', CHALLENGE_ENDED);
  return { personId, kind };
}
