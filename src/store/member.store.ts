/**
 * SQL for memberships (a person in an account, migration 0010) and the one-time tokens of the
 * dashboard: invitations (a membership's) and password resets (a person's). Addresses are stored
 * lower-cased; callers normalise before they ask.
 */
import type { Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type {
  MemberRow,
  MembersTable,
  MemberTokenKind,
  MemberTokenRow,
  MemberTokensTable,
} from './schema/dashboard.schema.js';

/** A membership with its person's address, as lists and the CLI show it. */
export type MemberWithEmail = MemberRow & { email: string };

export async function insertMember(db: Executor, row: Insertable<MembersTable>): Promise<MemberRow> {
  return db.insertInto('members').values(row).returningAll().executeTakeFirstOrThrow();
}

function membersWithEmail(db: Executor) {
  return db
    .selectFrom('members')
    .innerJoin('people', 'people.id', 'members.person_id')
    .selectAll('members')
    .select('people.email');
}

export async function findMemberById(db: Executor, id: string): Promise<MemberWithEmail | undefined> {
  return membersWithEmail(db).where('members.id', '=', id).executeTakeFirst();
}

/** The person's membership of the account, joined or pending. */
export async function findMembership(
  db: Executor,
  accountId: string,
  personId: string,
): Promise<MemberWithEmail | undefined> {
  return membersWithEmail(db)
    .where('members.account_id', '=', accountId)
    .where('members.person_id', '=', personId)
    .executeTakeFirst();
}

/** The member when it belongs to the account; undefined for an unknown id and another account's alike. */
export async function findAccountMember(
  db: Executor,
  accountId: string,
  id: string,
): Promise<MemberWithEmail | undefined> {
  return membersWithEmail(db)
    .where('members.id', '=', id)
    .where('members.account_id', '=', accountId)
    .executeTakeFirst();
}

/** The account's members, the owner first, then by arrival. */
export async function listAccountMembers(db: Executor, accountId: string): Promise<MemberWithEmail[]> {
  return membersWithEmail(db)
    .where('members.account_id', '=', accountId)
    .orderBy('members.role', 'desc')
    .orderBy('members.created_at')
    .orderBy('members.id')
    .execute();
}

/** Marks a pending membership joined; false when it was joined already (or is gone). */
export async function markJoined(db: Executor, id: string, now: string): Promise<boolean> {
  const res = await db
    .updateTable('members')
    .set({ joined_at: now })
    .where('id', '=', id)
    .where('joined_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/**
 * Deletes the membership (never the person); its invitations go with it, and sessions acting in
 * it lose their current account (foreign keys: cascade, set null).
 */
export async function deleteMember(db: Executor, id: string): Promise<boolean> {
  const res = await db.deleteFrom('members').where('id', '=', id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function insertMemberToken(db: Executor, row: Insertable<MemberTokensTable>): Promise<void> {
  await db.insertInto('member_tokens').values(row).execute();
}

/**
 * Forgets unused tokens: a membership's invitations (`{ memberId }`: a new link from the
 * operator replaces the earlier ones, joining ends the rest), or a person's password resets
 * (`{ personId }`: using one ends the others).
 */
export async function deleteUnusedTokens(
  db: Executor,
  owner: { memberId: string } | { personId: string },
): Promise<void> {
  let query = db.deleteFrom('member_tokens').where('used_at', 'is', null);
  query =
    'memberId' in owner
      ? query.where('member_id', '=', owner.memberId).where('kind', '=', 'invitation')
      : query.where('person_id', '=', owner.personId).where('kind', '=', 'password_reset');
  await query.execute();
}

/** Forgets the person's unused invitations to every membership but `keepMemberId`'s. */
export async function deleteOtherInvitations(
  db: Executor,
  personId: string,
  keepMemberId: string,
): Promise<void> {
  await db
    .deleteFrom('member_tokens')
    .where('person_id', '=', personId)
    .where('kind', '=', 'invitation')
    .where('used_at', 'is', null)
    .where('member_id', '!=', keepMemberId)
    .execute();
}

export type TokenWithPerson = MemberTokenRow & {
  email: string;
  has_password: boolean;
  /** The invitation's account; null for a password reset. */
  account_id: string | null;
};

/**
 * An unused, unexpired token of `kind`, with its person's address and the invitation's account.
 * An invitation is usable only while its membership is pending: once joined, it is spent.
 */
export async function findUsableToken(
  db: Executor,
  tokenHash: string,
  kind: MemberTokenKind,
  now: string,
): Promise<TokenWithPerson | undefined> {
  const row = await db
    .selectFrom('member_tokens')
    .innerJoin('people', 'people.id', 'member_tokens.person_id')
    .leftJoin('members', 'members.id', 'member_tokens.member_id')
    .selectAll('member_tokens')
    .select(['people.email', 'people.password_hash', 'members.account_id'])
    .where('member_tokens.token_hash', '=', tokenHash)
    .where('member_tokens.kind', '=', kind)
    .where('member_tokens.used_at', 'is', null)
    .where('member_tokens.expires_at', '>', now)
    .where((eb) =>
      eb.or([
        eb('member_tokens.kind', '!=', 'invitation'),
        eb.and([eb('members.id', 'is not', null), eb('members.joined_at', 'is', null)]),
      ]),
    )
    .executeTakeFirst();
  if (!row) return undefined;
  const { password_hash, ...rest } = row;
  return { ...rest, has_password: password_hash !== null, account_id: row.account_id ?? null };
}

/** Uses the token up; true for exactly one caller however many present it at once. */
export async function useToken(db: Executor, tokenHash: string, now: string): Promise<boolean> {
  const res = await db
    .updateTable('member_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** When the membership's last usable invitation expires; undefined when none is usable. */
export async function usableInvitationExpiry(
  db: Executor,
  memberId: string,
  now: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('member_tokens')
    .select((eb) => eb.fn.max('expires_at').as('expires_at'))
    .where('member_id', '=', memberId)
    .where('kind', '=', 'invitation')
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.expires_at ?? undefined;
}

/** Whether the person has an invitation they can still accept (unused, unexpired, pending). */
export async function hasUsableInvitation(db: Executor, personId: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('member_tokens')
    .innerJoin('members', 'members.id', 'member_tokens.member_id')
    .select('member_tokens.token_hash')
    .where('member_tokens.person_id', '=', personId)
    .where('member_tokens.kind', '=', 'invitation')
    .where('member_tokens.used_at', 'is', null)
    .where('member_tokens.expires_at', '>', now)
    .where('members.joined_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}
