/**
 * Dashboard people and memberships (docs/dashboard.md, "People and accounts"). A person (one
 * address, one password, one second factor) belongs to any number of accounts, each through a
 * membership with its own role. Nobody signs up: an operator (CLI) or an owner (dashboard)
 * invites an address to an account, which makes a pending membership (and the person, the first
 * time) and a one-time link valid 24 hours. A new person chooses a password at that link; a
 * person who has one already signs in first and then accepts it (the link never sets or changes
 * an existing person's password). A password reset is a link of the person's. Only the SHA-256
 * of a link's token is stored; the token itself is shown once (and e-mailed when a relay is
 * configured).
 *
 * An invitation never says whether the address is already someone's elsewhere: the inviter gets
 * the same answer for a person of another account as for a new address (issue 16, defect 4), and
 * 409 `member_exists` only when the person is in this account already.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { HOUR, type Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import {
  deleteMember,
  deleteOtherInvitations,
  deleteUnusedTokens,
  findAccountMember,
  findMemberById,
  findMembership,
  findUsableToken,
  insertMember,
  insertMemberToken,
  listAccountMembers,
  markJoined,
  usableInvitationExpiry,
  useToken,
  type MemberWithEmail,
} from '../../store/member.store.js';
import {
  findPersonByEmail,
  findPersonById,
  insertPerson,
  listPendingMemberships,
  setPersonPassword,
} from '../../store/person.store.js';
import type { MemberRole, MemberTokenKind, PersonRow } from '../../store/schema/dashboard.schema.js';
import { deletePersonSessions } from '../../store/session.store.js';
import { deletePersonChallenges } from '../../store/two-factor.store.js';
import { createAccount, getAccount, type NewAccount } from '../accounts/accounts.service.js';
import {
  BY_OPERATOR,
  recordAudit,
  recordPersonAudit,
  type AuditOrigin,
  type ChangeBy,
  type PersonChangeLog,
} from '../accounts/audit.service.js';
import { FAILURE_WINDOW_MS, failureKey, forgetAttempts, reserveAttempt } from './failure-budget.js';
import { randomBase62 } from '../ids.js';
import { refuseControlCharacters } from '../text.js';
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

export function toMemberView(row: MemberWithEmail): MemberView {
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
  /** Whom the link is for. */
  email: string;
  personId: string;
  /** The membership an invitation is for; null for a password reset (the person's). */
  member: MemberView | null;
  token: string;
  expiresAt: string;
}

/**
 * A new one-time token: an invitation to `member`, or a password reset of `person`. `replace`:
 * the unused ones it would duplicate stop working (an operator's new link); otherwise they keep
 * working (a reset link asked for again, or by someone else, must not turn the one already
 * e-mailed into a 404).
 */
async function issueToken(
  db: Executor,
  clock: Clock,
  target: { kind: 'invitation'; member: MemberWithEmail } | { kind: 'password_reset'; person: PersonRow },
  options: { replace: boolean; invitedBy?: string | null },
): Promise<IssuedLink> {
  const now = clock.now();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS).toISOString();
  const member = target.kind === 'invitation' ? target.member : null;
  const person =
    target.kind === 'invitation'
      ? { id: target.member.person_id, email: target.member.email }
      : { id: target.person.id, email: target.person.email };
  if (options.replace)
    await deleteUnusedTokens(db, member ? { memberId: member.id } : { personId: person.id });
  await insertMemberToken(db, {
    token_hash: hashToken(token),
    person_id: person.id,
    member_id: member?.id ?? null,
    kind: target.kind,
    created_at: now.toISOString(),
    expires_at: expiresAt,
    invited_by: options.invitedBy ?? null,
  });
  return {
    email: person.email,
    personId: person.id,
    member: member ? toMemberView(member) : null,
    token,
    expiresAt,
  };
}

/**
 * A one-time link where the person chooses a password (a password-reset link: it joins no
 * account). For an operator made by `mailverdict operators add` who has no password yet.
 */
export async function issuePasswordLink(db: Executor, clock: Clock, person: PersonRow): Promise<IssuedLink> {
  return issueToken(db, clock, { kind: 'password_reset', person }, { replace: true });
}

/** The person with this address, made (with no password) the first time it is named. */
export async function ensurePerson(db: Executor, clock: Clock, email: string): Promise<PersonRow> {
  const found = await findPersonByEmail(db, email);
  if (found) return found;
  return insertPerson(db, {
    id: `per_${randomBase62(16)}`,
    email,
    password_hash: null,
    created_at: clock.now().toISOString(),
    operator_since: null,
  });
}

/**
 * The operator's invitation (CLI, bootstrap): a pending membership (and the person, the first
 * time) and a link; inviting an address again before it joined replaces the earlier link. 409
 * `member_exists` only when the person is a member of this account already. Runs in the
 * caller's transaction (bootstrap creates the owner so).
 */
export async function issueInvitation(
  db: Executor,
  clock: Clock,
  input: { accountId: string; email: string; role?: MemberRole },
): Promise<IssuedLink> {
  const member = await pendingMember(db, clock, input);
  return issueToken(db, clock, { kind: 'invitation', member }, { replace: true });
}

/**
 * The membership an invitation is for: the pending one, or a new one. Whether the person exists
 * (in another account or none) changes nothing of the answer: no invitation reveals another
 * account, and a pending one reserves nothing elsewhere.
 */
async function pendingMember(
  db: Executor,
  clock: Clock,
  input: { accountId: string; email: string; role?: MemberRole },
): Promise<MemberWithEmail> {
  const email = normalizeEmail(input.email);
  await getAccount(db, input.accountId);
  const person = await ensurePerson(db, clock, email);
  const member = await findMembership(db, input.accountId, person.id);
  if (member?.joined_at != null)
    throw new AppError('member_exists', `${email} is already a member of this account`);
  if (member) return member;
  const row = await insertMember(db, {
    id: `mem_${randomBase62(16)}`,
    account_id: input.accountId,
    person_id: person.id,
    role: input.role ?? 'member',
    created_at: clock.now().toISOString(),
    joined_at: null,
  });
  return { ...row, email };
}

export interface MembersDeps {
  db: Executor;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl'>;
  /** Null: no relay configured, links are only shown. */
  mailer: Pick<MemberMailer, 'send'> | null;
  logger: Pick<Logger, 'warn'>;
}

export interface SentLink extends IssuedLink {
  link: string;
  /** Whether the relay took the e-mail carrying the link. */
  emailed: boolean;
}

/** The link of an issued token, e-mailed too when a relay is configured. */
export async function mailLink(
  deps: MembersDeps,
  kind: MemberTokenKind,
  issued: IssuedLink,
): Promise<SentLink> {
  const link = memberLink(deps.config.publicBaseUrl, kind, issued.token);
  let emailed = false;
  if (deps.mailer !== null) {
    try {
      await deps.mailer.send(issued.email, kind, link, issued.expiresAt);
      emailed = true;
    } catch (err) {
      deps.logger.warn({ err, kind }, 'the relay did not take the e-mail with a dashboard link');
    }
  }
  return { ...issued, link, emailed };
}

/** The operator's invitation (CLI), with its log entry: the link, e-mailed too when a relay is configured. */
export async function inviteMember(
  deps: MembersDeps,
  input: { accountId: string; email: string },
): Promise<SentLink> {
  const issued = await deps.db.transaction().execute(async (trx) => {
    const invitation = await issueInvitation(trx, deps.clock, input);
    await recordAudit(trx, deps.clock, {
      accountId: input.accountId,
      type: 'invitation_created',
      ...BY_OPERATOR,
      details: { member_id: invitation.member?.id ?? null, email: invitation.email, new_link: true },
    });
    return invitation;
  });
  return mailLink(deps, 'invitation', issued);
}

/**
 * A new account and its owner's invitation (the account's address), in the caller's transaction;
 * the link is not sent yet. As the bootstrap account gets on a brand-new store: `accounts create`
 * no longer makes an account that nobody can sign in to (issue 16).
 */
export async function issueOwnedAccount(
  trx: Executor,
  clock: Clock,
  input: NewAccount,
): Promise<{ accountId: string; issued: IssuedLink }> {
  const account = await createAccount(trx, clock, input);
  const issued = await issueInvitation(trx, clock, {
    accountId: account.id,
    email: account.email,
    role: 'owner',
  });
  return { accountId: account.id, issued };
}

/**
 * The operator's `accounts create` (CLI): the account, its owner's invitation and the invitation's
 * log entry in one transaction, then the link, e-mailed too when a relay is configured.
 */
export async function createOwnedAccount(
  deps: MembersDeps,
  input: NewAccount,
): Promise<{ accountId: string; owner: SentLink }> {
  const { accountId, issued } = await inTransaction(deps.db, async (trx) => {
    const made = await issueOwnedAccount(trx, deps.clock, input);
    await recordAudit(trx, deps.clock, {
      accountId: made.accountId,
      type: 'invitation_created',
      ...BY_OPERATOR,
      details: { member_id: made.issued.member?.id ?? null, email: made.issued.email, new_link: true },
    });
    return made;
  });
  return { accountId, owner: await mailLink(deps, 'invitation', issued) };
}

/** The member inviting from the dashboard. */
export interface Inviter {
  memberId: string;
  role: MemberRole;
  /** The inviter's address and the request's origin, for the log entry. */
  email: string;
  origin?: AuditOrigin;
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
  type Outcome = { pendingUntil?: string | undefined; member: MemberView; issued: IssuedLink | null };
  const outcome = await deps.db.transaction().execute(async (trx): Promise<Outcome> => {
    const member = await pendingMember(trx, clock, { ...input, role: 'member' });
    const pendingUntil = await usableInvitationExpiry(trx, member.id, clock.now().toISOString());
    // Pending and nothing to e-mail a new link with: the earlier link is the invitation.
    const issued =
      pendingUntil !== undefined && deps.mailer === null
        ? null
        : await issueToken(
            trx,
            clock,
            { kind: 'invitation', member },
            { replace: false, invitedBy: input.inviter.memberId },
          );
    await recordAudit(trx, clock, {
      accountId: input.accountId,
      type: 'invitation_created',
      actor: { kind: 'member', memberId: input.inviter.memberId, email: input.inviter.email },
      ...(input.inviter.origin === undefined ? {} : { origin: input.inviter.origin }),
      details: { member_id: member.id, email: member.email, new_link: pendingUntil === undefined },
    });
    return { pendingUntil, member: toMemberView(member), issued };
  });
  if (outcome.issued === null)
    return { member: outcome.member, link: null, expiresAt: outcome.pendingUntil!, emailed: false };
  const sent = await mailLink(deps, 'invitation', outcome.issued);
  return {
    member: outcome.member,
    link: outcome.pendingUntil === undefined ? sent.link : null,
    expiresAt: sent.expiresAt,
    emailed: sent.emailed,
  };
}

/** Reset e-mails one address may be sent per hour, however many ask (issue 16). */
export const RESET_MAILS_PER_HOUR = 3;

/**
 * A password-reset link for the person with this address, e-mailed when a relay is configured;
 * null when no person has it, or when the address was sent `RESET_MAILS_PER_HOUR` already (the
 * dashboard answers the same either way). Earlier links keep working until one is used.
 */
export async function requestPasswordReset(deps: MembersDeps, rawEmail: string): Promise<SentLink | null> {
  const email = normalizeEmail(rawEmail);
  const issued = await deps.db.transaction().execute(async (trx) => {
    const person = await findPersonByEmail(trx, email);
    if (!person) return null;
    const budget = { limit: RESET_MAILS_PER_HOUR, windowMs: HOUR, what: 'reset e-mails for this address' };
    try {
      await reserveAttempt(trx, failureKey(`reset-mail:${email}`), budget, deps.clock.now());
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limit_exceeded') return null;
      throw err;
    }
    return issueToken(trx, deps.clock, { kind: 'password_reset', person }, { replace: false });
  });
  return issued === null ? null : mailLink(deps, 'password_reset', issued);
}

/**
 * Why a password reset would not help this address (issue 25): a person who never set a password
 * and has invitations pending joins no account by a reset link; a new invitation link does it
 * (`members invite` on the pending membership replaces its link, owner or member). Null when a
 * reset is the right link (the person has a password, or no pending invitation).
 */
export async function pendingInsteadOfReset(
  db: Executor,
  rawEmail: string,
): Promise<{ email: string; pending: { account_id: string; role: MemberRole }[] } | null> {
  const email = normalizeEmail(rawEmail);
  const person = await findPersonByEmail(db, email);
  if (!person || person.password_hash !== null) return null;
  const pending = await listPendingMemberships(db, person.id);
  return pending.length === 0
    ? null
    : { email, pending: pending.map((p) => ({ account_id: p.account_id, role: p.role })) };
}

const UNUSABLE_LINK =
  'this link is not valid: it has expired, was already used, or was replaced by a newer one';

/** What the invitation page shows before the person accepts. */
export interface InvitationDetails {
  email: string;
  expires_at: string;
}

export async function describeInvitation(
  db: Executor,
  clock: Clock,
  token: string,
): Promise<InvitationDetails> {
  const found = await findUsableToken(db, hashToken(token), 'invitation', clock.now().toISOString());
  if (!found) throw new AppError('not_found', UNUSABLE_LINK);
  // Nothing of whether the address has a password: the owner who invited it holds the link too,
  // and would learn that the address is a person of another account (issue 26).
  return { email: found.email, expires_at: found.expires_at };
}

const SIGN_IN_FIRST =
  'this address has a password already: sign in, then open the link again to join the account';

/** What using a link did: the person, and the membership it joined (an invitation's). */
export interface AcceptedLink {
  person: PersonRow;
  /** The membership joined; null for a password reset. */
  member: MemberWithEmail | null;
}

/**
 * Uses a link with a new password: a new person's invitation (they join the account and choose
 * their password) or a password reset (the person's password changes and every session and open
 * sign-in challenge of theirs ends; it joins no account: a pending invitation is accepted only through its own link). An
 * invitation for a person who has a password already is refused with 401 `unauthenticated`
 * (sign in, then `joinWithInvitation`). 404 `not_found` for a link that cannot be used, the same
 * whatever the cause. Its security-log entry (`invitation_accepted` in the account joined, or
 * `password_reset` in each of the person's accounts) is written in the same transaction.
 */
export async function acceptLink(
  db: Executor,
  clock: Clock,
  input: { token: string; password: string; kind: MemberTokenKind; origin?: AuditOrigin },
): Promise<AcceptedLink> {
  // The token first: a bogus link costs one read, not the password hash's 32 MiB of scrypt
  // (issue 16: forty such requests made a sign-in elsewhere wait seconds). The transaction below
  // checks it again, as it may be used meanwhile.
  const tokenHash = hashToken(input.token);
  const usable = await findUsableToken(db, tokenHash, input.kind, clock.now().toISOString());
  if (!usable) throw new AppError('not_found', UNUSABLE_LINK);
  // The password's strength first: a weak one is refused alike whether the address has a
  // password or not (issue 26).
  refuseWeakPassword(input.password, usable.email);
  if (input.kind === 'invitation' && usable.has_password)
    throw new AppError('unauthenticated', SIGN_IN_FIRST);
  // Hashed before the transaction: a SQLite write lock is not held for the hash's 100+ ms.
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    const now = clock.now().toISOString();
    const found = await findUsableToken(trx, tokenHash, input.kind, now);
    if (!found) throw new AppError('not_found', UNUSABLE_LINK);
    // Checked again inside: a password set meanwhile (another invitation, a reset) is not overwritten.
    if (input.kind === 'invitation' && found.has_password)
      throw new AppError('unauthenticated', SIGN_IN_FIRST);
    if (!(await useToken(trx, tokenHash, now))) throw new AppError('not_found', UNUSABLE_LINK);
    await setPersonPassword(trx, found.person_id, passwordHash);
    let member: MemberWithEmail | null = null;
    if (found.member_id !== null) {
      await markJoined(trx, found.member_id, now);
      await deleteUnusedTokens(trx, { memberId: found.member_id });
      // The password was chosen at one account's link, which its inviter may have seen: the
      // person's invitations to other accounts end, or that inviter, signed in as the person,
      // could accept them. The other accounts invite again (e-mailed to the person).
      await deleteOtherInvitations(trx, found.person_id, found.member_id);
      member = (await findMemberById(trx, found.member_id)) ?? null;
    }
    await deleteUnusedTokens(trx, { personId: found.person_id });
    if (input.kind === 'password_reset') {
      await deletePersonSessions(trx, found.person_id);
      // A sign-in half done with the old password ends too (issue 26).
      await deletePersonChallenges(trx, found.person_id);
    }
    const person = await findPersonById(trx, found.person_id);
    if (!person) throw new AppError('not_found', UNUSABLE_LINK);
    const origin = input.origin === undefined ? {} : { origin: input.origin };
    if (member !== null)
      await recordAudit(trx, clock, {
        accountId: member.account_id,
        type: 'invitation_accepted',
        actor: { kind: 'member', memberId: member.id, email: person.email },
        ...origin,
      });
    else await recordPersonAudit(trx, clock, person, { type: 'password_reset', ...origin });
    return { person, member };
  });
}

/**
 * Accepts an invitation as the signed-in person (issue 16, "People in several accounts"): the
 * membership joins, no password is asked. 404 `not_found`, as for any unusable link, when the
 * invitation is for another person. Its `invitation_accepted` entry is written in the same transaction.
 */
export async function joinWithInvitation(
  db: Executor,
  clock: Clock,
  input: { token: string; personId: string; origin?: AuditOrigin },
): Promise<MemberWithEmail> {
  const tokenHash = hashToken(input.token);
  return db.transaction().execute(async (trx) => {
    const now = clock.now().toISOString();
    const found = await findUsableToken(trx, tokenHash, 'invitation', now);
    if (!found || found.person_id !== input.personId || found.member_id === null)
      throw new AppError('not_found', UNUSABLE_LINK);
    if (!(await useToken(trx, tokenHash, now)) || !(await markJoined(trx, found.member_id, now)))
      throw new AppError('not_found', UNUSABLE_LINK);
    await deleteUnusedTokens(trx, { memberId: found.member_id });
    const member = await findMemberById(trx, found.member_id);
    if (!member) throw new AppError('not_found', UNUSABLE_LINK);
    await recordAudit(trx, clock, {
      accountId: member.account_id,
      type: 'invitation_accepted',
      actor: { kind: 'member', memberId: member.id, email: member.email },
      ...(input.origin === undefined ? {} : { origin: input.origin }),
    });
    return member;
  });
}

export async function listMembers(db: Executor, accountId: string): Promise<MemberView[]> {
  return (await listAccountMembers(db, accountId)).map(toMemberView);
}

/**
 * Removes a membership of the account. The person stays (with their other memberships, password
 * and second factor); their sessions acting in this account move to another of their accounts at
 * their next request, or end when there is none (services/people/sessions.service.ts). 404 for another
 * account's member, 409 `owner_not_removable` for the owner.
 */
export async function removeMember(
  db: Executor,
  clock: Clock,
  input: { accountId: string; memberId: string },
  by: ChangeBy,
): Promise<MemberView> {
  return inTransaction(db, async (trx) => {
    const member = await findAccountMember(trx, input.accountId, input.memberId);
    if (!member) throw new AppError('not_found', `no member ${input.memberId}`);
    if (member.role === 'owner')
      throw new AppError('owner_not_removable', "the account's owner cannot be removed");
    await deleteMember(trx, member.id);
    await recordAudit(trx, clock, {
      accountId: input.accountId,
      // A member who never joined was an invitation.
      type: member.joined_at === null ? 'invitation_revoked' : 'member_removed',
      ...by,
      details: { member_id: member.id, email: member.email },
    });
    return toMemberView(member);
  });
}

/** The CLI's removal, by address. */
export async function removeMemberByEmail(
  db: Executor,
  clock: Clock,
  input: { accountId: string; email: string },
  by: ChangeBy,
): Promise<MemberView> {
  const address = normalizeEmail(input.email);
  const person = await findPersonByEmail(db, address);
  const member = person ? await findMembership(db, input.accountId, person.id) : undefined;
  if (!member) throw new AppError('not_found', `${address} is not a member of account ${input.accountId}`);
  return removeMember(db, clock, { accountId: input.accountId, memberId: member.id }, by);
}

/**
 * Changes the signed-in person's password after checking the current one (401
 * `invalid_credentials`); the person's other sessions and open sign-in challenges end, the one
 * asking stays, and `password_changed` is logged in the account the session acts in, in the same
 * transaction.
 */
export async function changePassword(
  db: Executor,
  clock: Clock,
  input: {
    personId: string;
    current: string;
    next: string;
    keepSessionId: string;
    failureLimit: number;
    log: PersonChangeLog;
  },
): Promise<void> {
  // A wrong current password counts like a failed sign-in, per person (issue 16): a session
  // left open on another person's machine cannot be used to guess it. Reserved before the hash.
  const now = clock.now();
  const key = failureKey(`password-change:${input.personId}`);
  await reserveAttempt(
    db,
    key,
    { limit: input.failureLimit, windowMs: FAILURE_WINDOW_MS, what: 'wrong current passwords' },
    now,
  );
  const person = await findPersonById(db, input.personId);
  if (!person?.password_hash || !(await verifyPassword(input.current, person.password_hash)))
    throw new AppError('invalid_credentials', 'the current password is not correct');
  await forgetAttempts(db, key);
  refuseWeakPassword(input.next, person.email);
  const passwordHash = await hashPassword(input.next);
  await inTransaction(db, async (trx) => {
    await setPersonPassword(trx, person.id, passwordHash);
    await deletePersonSessions(trx, person.id, input.keepSessionId);
    // A challenge earned with the old password (someone who knew it) ends with it (issue 26).
    await deletePersonChallenges(trx, person.id);
    if (input.log) await recordAudit(trx, clock, { ...input.log, type: 'password_changed' });
  });
}
