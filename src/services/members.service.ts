/**
 * Dashboard members: the people who sign in to an account's dashboard (docs/dashboard.md).
 * Nobody signs up: an operator (CLI) or a member (dashboard) invites an address, which gets a
 * one-time link valid 24 hours where the person sets a password. A password reset is the same
 * kind of link. Only the SHA-256 of a link's token is stored; the token itself is shown once
 * (and e-mailed when a relay is configured).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { HOUR, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Executor } from '../store/executor.js';
import {
  deleteMember,
  deleteUnusedTokens,
  findAccountMember,
  findMemberByEmail,
  findMemberById,
  findUsableToken,
  insertMember,
  insertMemberToken,
  listAccountMembers,
  setMemberPassword,
  usableInvitationExpiry,
  useToken,
} from '../store/member.store.js';
import type { MemberRole, MemberRow, MemberTokenKind } from '../store/schema/dashboard.schema.js';
import { deleteMemberSessions } from '../store/session.store.js';
import { createAccount, getAccount, type NewAccount } from './accounts.service.js';
import { FAILURE_WINDOW_MS, failureKey, forgetAttempts, reserveAttempt } from './failure-budget.js';
import { randomBase62 } from './ids.js';
import { refuseControlCharacters } from './text.js';
import type { MemberMailer } from './member-mail.js';
import { refuseWeakPassword } from './password-strength.js';
import { hashPassword, verifyPassword } from './passwords.js';

/** How long an invitation or a password-reset link works. */
export const LINK_TTL_MS = 24 * HOUR;

/** A member as the dashboard and the CLI show it (src/dashboard/contract.ts `Member`). */
export interface MemberView {
  id: string;
  email: string;
  role: MemberRole;
  created_at: string;
  joined_at: string | null;
}

export function toMemberView(row: MemberRow): MemberView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    created_at: row.created_at,
    joined_at: row.joined_at,
  };
}

/** Addresses are compared lower-cased and trimmed: `Anna@Example.org ` signs in as anna@example.org. */
export function normalizeEmail(raw: string): string {
  refuseControlCharacters('email', raw);
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !/^[^@\s]+@[^@\s]+$/.test(email))
    throw new AppError('invalid_request', `email must be an e-mail address, got "${raw.trim()}"`);
  return email;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The page a link opens; the token travels in the fragment, so it never reaches a server log or a Referer. */
export function memberLink(publicBaseUrl: string, kind: MemberTokenKind, token: string): string {
  return `${publicBaseUrl}/${kind === 'invitation' ? 'accept-invite' : 'reset-password'}#${token}`;
}

export interface IssuedLink {
  member: MemberView;
  token: string;
  expiresAt: string;
}

/**
 * A new one-time token of `kind` for the member. `replace`: the member's unused ones of that kind
 * stop working (an operator's new link); otherwise they keep working (a reset link asked for
 * again, or by someone else, must not turn the one already e-mailed into a 404).
 */
async function issueToken(
  db: Executor,
  clock: Clock,
  member: MemberRow,
  kind: MemberTokenKind,
  options: { replace: boolean; invitedBy?: string | null },
): Promise<IssuedLink> {
  const now = clock.now();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS).toISOString();
  if (options.replace) await deleteUnusedTokens(db, member.id, kind);
  await insertMemberToken(db, {
    token_hash: hashToken(token),
    member_id: member.id,
    kind,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    invited_by: options.invitedBy ?? null,
  });
  return { member: toMemberView(member), token, expiresAt };
}

/**
 * The operator's invitation (CLI, bootstrap): creates the member (no password yet) and a link;
 * inviting an address again before it joined replaces the earlier link. 409 `member_exists` when
 * the address already joined, or belongs to another account. Runs in the caller's transaction
 * (bootstrap creates the owner so).
 */
export async function issueInvitation(
  db: Executor,
  clock: Clock,
  input: { accountId: string; email: string; role?: MemberRole },
): Promise<IssuedLink> {
  const member = await pendingMember(db, clock, input);
  return issueToken(db, clock, member, 'invitation', { replace: true });
}

/** The member row an invitation is for: the pending one, or a new one (no password yet). */
async function pendingMember(
  db: Executor,
  clock: Clock,
  input: { accountId: string; email: string; role?: MemberRole },
): Promise<MemberRow> {
  const email = normalizeEmail(input.email);
  await getAccount(db, input.accountId);
  const member = await findMemberByEmail(db, email);
  if (member && (member.account_id !== input.accountId || member.joined_at !== null))
    throw new AppError(
      'member_exists',
      member.account_id === input.accountId
        ? `${email} is already a member of this account`
        : `${email} is already a member of another account`,
    );
  return (
    member ??
    insertMember(db, {
      id: `mem_${randomBase62(16)}`,
      account_id: input.accountId,
      email,
      role: input.role ?? 'member',
      password_hash: null,
      created_at: clock.now().toISOString(),
      joined_at: null,
    })
  );
}

export interface MembersDeps {
  db: Executor;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl'>;
  /** Null: no relay configured, links are only shown. */
  mailer: MemberMailer | null;
  logger: Pick<Logger, 'warn'>;
}

export interface SentLink extends IssuedLink {
  link: string;
  /** Whether the relay took the e-mail carrying the link. */
  emailed: boolean;
}

async function mailLink(deps: MembersDeps, kind: MemberTokenKind, issued: IssuedLink): Promise<SentLink> {
  const link = memberLink(deps.config.publicBaseUrl, kind, issued.token);
  let emailed = false;
  if (deps.mailer !== null) {
    try {
      await deps.mailer.send(issued.member.email, kind, link, issued.expiresAt);
      emailed = true;
    } catch (err) {
      deps.logger.warn({ err, kind }, 'the relay did not take the e-mail with a dashboard link');
    }
  }
  return { ...issued, link, emailed };
}

/** The operator's invitation (CLI): the link, e-mailed too when a relay is configured. */
export async function inviteMember(
  deps: MembersDeps,
  input: { accountId: string; email: string },
): Promise<SentLink> {
  const issued = await deps.db.transaction().execute((trx) => issueInvitation(trx, deps.clock, input));
  return mailLink(deps, 'invitation', issued);
}

/**
 * A new account and its owner's invitation (the account's address), in one transaction, as the
 * bootstrap account gets on a brand-new store: `accounts create` no longer makes an account that
 * nobody can sign in to (issue 16).
 */
export async function createOwnedAccount(
  deps: MembersDeps,
  input: NewAccount,
): Promise<{ accountId: string; owner: SentLink }> {
  const { accountId, issued } = await deps.db.transaction().execute(async (trx) => {
    const account = await createAccount(trx, deps.clock, input);
    const owner = await issueInvitation(trx, deps.clock, {
      accountId: account.id,
      email: account.email,
      role: 'owner',
    });
    return { accountId: account.id, issued: owner };
  });
  return { accountId, owner: await mailLink(deps, 'invitation', issued) };
}

/** The member inviting from the dashboard. */
export interface Inviter {
  memberId: string;
  role: MemberRole;
}

/** What the dashboard tells the inviter: `link` null when the invitation was pending already. */
export interface InvitationSent {
  member: MemberView;
  link: string | null;
  expiresAt: string;
  emailed: boolean;
}

/**
 * A member's invitation from the dashboard (issue 16). Only the owner invites, and always a
 * member: an invitation is never above its inviter. When the address's invitation is pending
 * already, the inviter gets no new link: the person is e-mailed a new one (when a relay is
 * configured) and the earlier links keep working, so nobody can re-invite an address to take its
 * link. An invitation dies with the member who made it (the store's foreign key).
 */
export async function inviteFromDashboard(
  deps: MembersDeps,
  input: { accountId: string; email: string; inviter: Inviter },
): Promise<InvitationSent> {
  if (input.inviter.role !== 'owner')
    throw new AppError('insufficient_permissions', "only the account's owner can invite members");
  const { clock } = deps;
  type Outcome = { pendingUntil?: string; member: MemberView; issued: IssuedLink | null };
  const outcome = await deps.db.transaction().execute(async (trx): Promise<Outcome> => {
    const member = await pendingMember(trx, clock, { ...input, role: 'member' });
    const pendingUntil = await usableInvitationExpiry(trx, member.id, clock.now().toISOString());
    // Pending and nothing to e-mail a new link with: the earlier link is the invitation.
    if (pendingUntil !== undefined && deps.mailer === null)
      return { pendingUntil, member: toMemberView(member), issued: null };
    const issued = await issueToken(trx, clock, member, 'invitation', {
      replace: false,
      invitedBy: input.inviter.memberId,
    });
    return { pendingUntil, member: issued.member, issued };
  });
  if (outcome.issued === null)
    return { member: outcome.member, link: null, expiresAt: outcome.pendingUntil!, emailed: false };
  const sent = await mailLink(deps, 'invitation', outcome.issued);
  return {
    member: sent.member,
    link: outcome.pendingUntil === undefined ? sent.link : null,
    expiresAt: sent.expiresAt,
    emailed: sent.emailed,
  };
}

/** Reset e-mails one address may be sent per hour, however many ask (issue 16). */
export const RESET_MAILS_PER_HOUR = 3;

/**
 * A password-reset link for the member with this address, e-mailed when a relay is configured;
 * null when no member has it, or when the address was sent `RESET_MAILS_PER_HOUR` already (the
 * dashboard answers the same either way). Earlier links keep working until one is used.
 */
export async function requestPasswordReset(deps: MembersDeps, rawEmail: string): Promise<SentLink | null> {
  const email = normalizeEmail(rawEmail);
  const issued = await deps.db.transaction().execute(async (trx) => {
    const member = await findMemberByEmail(trx, email);
    if (!member) return null;
    const budget = { limit: RESET_MAILS_PER_HOUR, windowMs: HOUR, what: 'reset e-mails for this address' };
    try {
      await reserveAttempt(trx, failureKey(`reset-mail:${email}`), budget, deps.clock.now());
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limit_exceeded') return null;
      throw err;
    }
    return issueToken(trx, deps.clock, member, 'password_reset', { replace: false });
  });
  return issued === null ? null : mailLink(deps, 'password_reset', issued);
}

const UNUSABLE_LINK =
  'this link is not valid: it has expired, was already used, or was replaced by a newer one';

/** What the invitation page shows before the password is chosen. */
export async function describeInvitation(
  db: Executor,
  clock: Clock,
  token: string,
): Promise<{ email: string; expires_at: string }> {
  const found = await findUsableToken(db, hashToken(token), 'invitation', clock.now().toISOString());
  if (!found) throw new AppError('not_found', UNUSABLE_LINK);
  return { email: found.email, expires_at: found.expires_at };
}

/**
 * Uses a link: sets the member's password (joining the account, for an invitation). Every other
 * unused link of the member ends with it, and a reset also ends every session of the member.
 * 404 `not_found` for a link that cannot be used, the same whatever the cause. Returns the
 * member, for the caller to sign in.
 */
export async function acceptLink(
  db: Executor,
  clock: Clock,
  input: { token: string; password: string; kind: MemberTokenKind },
): Promise<MemberRow> {
  // The token first: a bogus link costs one read, not the password hash's 32 MiB of scrypt
  // (issue 16: forty such requests made a sign-in elsewhere wait seconds). The transaction below
  // checks it again, as it may be used meanwhile.
  const tokenHash = hashToken(input.token);
  const usable = await findUsableToken(db, tokenHash, input.kind, clock.now().toISOString());
  if (!usable) throw new AppError('not_found', UNUSABLE_LINK);
  refuseWeakPassword(input.password, usable.email);
  // Hashed before the transaction: a SQLite write lock is not held for the hash's 100+ ms.
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    const now = clock.now().toISOString();
    const found = await findUsableToken(trx, tokenHash, input.kind, now);
    if (!found || !(await useToken(trx, tokenHash, now))) throw new AppError('not_found', UNUSABLE_LINK);
    const member = await setMemberPassword(trx, found.member_id, passwordHash, now);
    if (!member) throw new AppError('not_found', UNUSABLE_LINK);
    await deleteUnusedTokens(trx, member.id);
    if (input.kind === 'password_reset') await deleteMemberSessions(trx, member.id);
    return member;
  });
}

export async function listMembers(db: Executor, accountId: string): Promise<MemberView[]> {
  return (await listAccountMembers(db, accountId)).map(toMemberView);
}

/**
 * Removes a member of the account; its sessions end with it (the store cascades). 404 for
 * another account's member, 409 `owner_not_removable` for the owner.
 */
export async function removeMember(db: Executor, accountId: string, memberId: string): Promise<MemberView> {
  return db.transaction().execute(async (trx) => {
    const member = await findAccountMember(trx, accountId, memberId);
    if (!member) throw new AppError('not_found', `no member ${memberId}`);
    if (member.role === 'owner')
      throw new AppError('owner_not_removable', "the account's owner cannot be removed");
    await deleteMember(trx, member.id);
    return toMemberView(member);
  });
}

/** The CLI's removal, by address. */
export async function removeMemberByEmail(
  db: Executor,
  accountId: string,
  email: string,
): Promise<MemberView> {
  const member = await findMemberByEmail(db, normalizeEmail(email));
  if (!member || member.account_id !== accountId)
    throw new AppError('not_found', `${normalizeEmail(email)} is not a member of account ${accountId}`);
  return removeMember(db, accountId, member.id);
}

/**
 * Changes the signed-in member's password after checking the current one (401
 * `invalid_credentials`); the member's other sessions end, the one asking stays.
 */
export async function changePassword(
  db: Executor,
  clock: Clock,
  input: { memberId: string; current: string; next: string; keepSessionId: string; failureLimit: number },
): Promise<void> {
  // A wrong current password counts like a failed sign-in, per member (issue 16): a session
  // left open on another person's machine cannot be used to guess it. Reserved before the hash.
  const now = clock.now();
  const key = failureKey(`password-change:${input.memberId}`);
  await reserveAttempt(
    db,
    key,
    { limit: input.failureLimit, windowMs: FAILURE_WINDOW_MS, what: 'wrong current passwords' },
    now,
  );
  const member = await findMemberById(db, input.memberId);
  if (!member?.password_hash || !(await verifyPassword(input.current, member.password_hash)))
    throw new AppError('invalid_credentials', 'the current password is not correct');
  await forgetAttempts(db, key);
  refuseWeakPassword(input.next, member.email);
  const passwordHash = await hashPassword(input.next);
  await db.transaction().execute(async (trx) => {
    await setMemberPassword(trx, member.id, passwordHash, clock.now().toISOString());
    await deleteMemberSessions(trx, member.id, input.keepSessionId);
  });
}
