/**
 * SQL for dashboard sessions (services/people/sessions.service.ts) and the failed sign-ins counted per
 * address. A session row is keyed by the SHA-256 of the cookie's secret.
 */
import { sql, type Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { DashboardSessionsTable, MemberRole, SessionRow } from './schema/dashboard.schema.js';

export async function insertSession(db: Executor, row: Insertable<DashboardSessionsTable>): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

/**
 * A session with what every dashboard request needs of its person, its current membership and
 * that membership's account, in one query. The membership's columns are null when the session
 * has none (it was removed, or the person is an operator in no account).
 */
export interface SessionWithPerson {
  id: string;
  person_id: string;
  member_id: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  email: string;
  operator_since: string | null;
  role: MemberRole | null;
  member_created_at: string | null;
  joined_at: string | null;
  account_id: string | null;
  account_plan: string | null;
  account_email: string | null;
  /** When the person's TOTP was turned on; null: no second factor. */
  two_factor_enabled_at: string | null;
  /** 1: the current account requires two factors of every member. */
  require_two_factor: number | null;
}

export async function findSessionWithPerson(
  db: Executor,
  id: string,
): Promise<SessionWithPerson | undefined> {
  return db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('people as p', 'p.id', 's.person_id')
    .leftJoin('members as m', 'm.id', 's.member_id')
    .leftJoin('accounts as a', 'a.id', 'm.account_id')
    .leftJoin('member_two_factor as t', 't.person_id', 'p.id')
    .select([
      's.id',
      's.person_id',
      's.member_id',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      'p.email',
      'p.operator_since',
      'm.role',
      'm.created_at as member_created_at',
      'm.joined_at',
      'm.account_id',
      'a.plan as account_plan',
      'a.email as account_email',
      't.enabled_at as two_factor_enabled_at',
      'a.require_two_factor',
    ])
    .where('s.id', '=', id)
    .executeTakeFirst();
}

/** Moves the session to another of its person's memberships (null: none). */
export async function setSessionMember(db: Executor, id: string, memberId: string | null): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ member_id: memberId }).where('id', '=', id).execute();
}

/** Moves last_seen_at forward (only forward: two requests at once cannot move it back). */
export async function touchSession(db: Executor, id: string, now: string): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ last_seen_at: now })
    .where('id', '=', id)
    .where('last_seen_at', '<', now)
    .execute();
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id', '=', id).execute();
}

/** Ends every session of the person, except `keep` when given (the one changing its password). */
export async function deletePersonSessions(db: Executor, personId: string, keep?: string): Promise<number> {
  let q = db.deleteFrom('dashboard_sessions').where('person_id', '=', personId);
  if (keep !== undefined) q = q.where('id', '!=', keep);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deletes sessions past their absolute end, or idle since before `idleSince`. */
export async function deleteExpiredSessions(db: Executor, now: string, idleSince: string): Promise<number> {
  const res = await db
    .deleteFrom('dashboard_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Failed sign-ins counted for `key` in the window that started at `windowStart`. */
export async function countSignInFailures(db: Executor, key: string, windowStart: string): Promise<number> {
  const row = await db
    .selectFrom('sign_in_failures')
    .select('failures')
    .where('key', '=', key)
    .where('window_start', '=', windowStart)
    .executeTakeFirst();
  return row?.failures ?? 0;
}

/**
 * Counts one more attempt in the window, in one atomic upsert, and returns the window's count
 * with it: concurrent callers each see a different count, so a budget cannot be overrun.
 */
export async function addSignInFailure(db: Executor, key: string, windowStart: string): Promise<number> {
  const row = await db
    .insertInto('sign_in_failures')
    .values({ key, window_start: windowStart, failures: 1 })
    .onConflict((oc) =>
      oc
        .columns(['key', 'window_start'])
        .doUpdateSet({ failures: sql<number>`sign_in_failures.failures + 1` }),
    )
    .returning('failures')
    .executeTakeFirstOrThrow();
  return Number(row.failures);
}

export async function deleteSignInFailures(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('key', '=', key).execute();
}

/** Forgets windows that started before `before`. */
export async function deleteOldSignInFailures(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('window_start', '<', before).execute();
}

/** A person's sessions (the sessions page), newest first. */
export async function listPersonSessions(db: Executor, personId: string): Promise<SessionRow[]> {
  return db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('person_id', '=', personId)
    .orderBy('created_at', 'desc')
    .execute();
}

/** Ends one session of the person; false when the person has no such session. */
export async function deletePersonSession(db: Executor, personId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('dashboard_sessions')
    .where('id', '=', id)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
