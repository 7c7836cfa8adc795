/**
 * SQL for dashboard members and their one-time tokens (invitations, password resets). Addresses
 * are stored lower-cased; callers normalise before they ask.
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

export async function insertMember(db: Executor, row: Insertable<MembersTable>): Promise<MemberRow> {
  return db.insertInto('members').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findMemberByEmail(db: Executor, email: string): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findMemberById(db: Executor, id: string): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The member when it belongs to the account; undefined for an unknown id and another account's alike. */
export async function findAccountMember(
  db: Executor,
  accountId: string,
  id: string,
): Promise<MemberRow | undefined> {
  return db
    .selectFrom('members')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** The account's members, the owner first, then by arrival. */
export async function listAccountMembers(db: Executor, accountId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('members')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('role', 'desc')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Sets the password; the first time also marks the member as joined. */
export async function setMemberPassword(
  db: Executor,
  id: string,
  passwordHash: string,
  now: string,
): Promise<MemberRow | undefined> {
  return db
    .updateTable('members')
    .set((eb) => ({
      password_hash: passwordHash,
      joined_at: eb.fn.coalesce('joined_at', eb.val(now)),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the member; its sessions and tokens go with it (foreign keys cascade). */
export async function deleteMember(db: Executor, id: string): Promise<boolean> {
  const res = await db.deleteFrom('members').where('id', '=', id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function insertMemberToken(db: Executor, row: Insertable<MemberTokensTable>): Promise<void> {
  await db.insertInto('member_tokens').values(row).execute();
}

/**
 * Forgets the member's unused tokens: of one kind (an operator's new link replaces the previous
 * ones), or of every kind (using one link ends the others).
 */
export async function deleteUnusedTokens(
  db: Executor,
  memberId: string,
  kind?: MemberTokenKind,
): Promise<void> {
  let query = db.deleteFrom('member_tokens').where('member_id', '=', memberId).where('used_at', 'is', null);
  if (kind !== undefined) query = query.where('kind', '=', kind);
  await query.execute();
}

export type TokenWithMember = MemberTokenRow & { email: string; account_id: string };

/**
 * An unused, unexpired token of `kind` and its member's address and account. An invitation is
 * usable only while its member has not joined: once they have, by any route, it is spent.
 */
export async function findUsableToken(
  db: Executor,
  tokenHash: string,
  kind: MemberTokenKind,
  now: string,
): Promise<TokenWithMember | undefined> {
  return db
    .selectFrom('member_tokens')
    .innerJoin('members', 'members.id', 'member_tokens.member_id')
    .selectAll('member_tokens')
    .select(['members.email', 'members.account_id'])
    .where('member_tokens.token_hash', '=', tokenHash)
    .where('member_tokens.kind', '=', kind)
    .where('member_tokens.used_at', 'is', null)
    .where('member_tokens.expires_at', '>', now)
    .where((eb) => eb.or([eb('member_tokens.kind', '!=', 'invitation'), eb('members.joined_at', 'is', null)]))
    .executeTakeFirst();
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

/** When the member's last usable invitation expires; undefined when none is usable. */
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
