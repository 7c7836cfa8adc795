/**
 * SQL for people (migration 0010): one address, one password, one second factor, any number of
 * memberships; and the operators among them. Addresses are stored lower-cased; callers normalise
 * before they ask.
 */
import type { Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type {
  EmailChangeRow,
  EmailChangesTable,
  MemberRole,
  PeopleTable,
  PersonRow,
} from './schema/dashboard.schema.js';

export async function insertPerson(db: Executor, row: Insertable<PeopleTable>): Promise<PersonRow> {
  return db.insertInto('people').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findPersonByEmail(db: Executor, email: string): Promise<PersonRow | undefined> {
  return db.selectFrom('people').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findPersonById(db: Executor, id: string): Promise<PersonRow | undefined> {
  return db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setPersonPassword(db: Executor, id: string, passwordHash: string): Promise<boolean> {
  const res = await db
    .updateTable('people')
    .set({ password_hash: passwordHash })
    .where('id', '=', id)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** Sets the person's sign-in address (lower-cased by the caller); whether the row changed. */
export async function setPersonEmail(db: Executor, id: string, email: string): Promise<boolean> {
  const res = await db.updateTable('people').set({ email }).where('id', '=', id).executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** A pending change of address (migration 0019); the person's earlier pending ones stop working. */
export async function insertEmailChange(db: Executor, row: Insertable<EmailChangesTable>): Promise<void> {
  await db
    .deleteFrom('email_changes')
    .where('person_id', '=', row.person_id)
    .where('used_at', 'is', null)
    .execute();
  await db.insertInto('email_changes').values(row).execute();
}

/** The unused, unexpired change of the link's token. */
export async function findUsableEmailChange(
  db: Executor,
  tokenHash: string,
  now: string,
): Promise<EmailChangeRow | undefined> {
  return db
    .selectFrom('email_changes')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks the change used; false when another request used it first. */
export async function useEmailChange(db: Executor, tokenHash: string, now: string): Promise<boolean> {
  const res = await db
    .updateTable('email_changes')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

/** Makes the person an operator (from `since`) or not (null); whether the row changed. */
export async function setOperator(db: Executor, id: string, since: string | null): Promise<boolean> {
  let query = db.updateTable('people').set({ operator_since: since }).where('id', '=', id);
  query =
    since === null
      ? query.where('operator_since', 'is not', null)
      : query.where('operator_since', 'is', null);
  const res = await query.executeTakeFirst();
  return res.numUpdatedRows === 1n;
}

export async function listOperators(db: Executor): Promise<PersonRow[]> {
  return db
    .selectFrom('people')
    .selectAll()
    .where('operator_since', 'is not', null)
    .orderBy('operator_since')
    .orderBy('id')
    .execute();
}

/** One of a person's joined memberships, with what the account switcher shows of its account. */
export interface MembershipWithAccount {
  member_id: string;
  account_id: string;
  role: MemberRole;
  joined_at: string;
  account_plan: string;
  account_email: string;
}

/** The person's joined memberships, oldest first (pending invitations are not memberships yet). */
export async function listPersonMemberships(
  db: Executor,
  personId: string,
): Promise<MembershipWithAccount[]> {
  const rows = await db
    .selectFrom('members as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select([
      'm.id as member_id',
      'm.account_id',
      'm.role',
      'm.joined_at',
      'a.plan as account_plan',
      'a.email as account_email',
    ])
    .where('m.person_id', '=', personId)
    .where('m.joined_at', 'is not', null)
    .orderBy('m.joined_at')
    .orderBy('m.id')
    .execute();
  return rows.map((r) => ({ ...r, joined_at: r.joined_at! }));
}

/** The person's pending invitations (memberships not joined yet), oldest first. */
export async function listPendingMemberships(
  db: Executor,
  personId: string,
): Promise<{ member_id: string; account_id: string; role: MemberRole }[]> {
  return db
    .selectFrom('members')
    .select(['id as member_id', 'account_id', 'role'])
    .where('person_id', '=', personId)
    .where('joined_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
