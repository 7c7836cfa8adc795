/**
 * SQL for the security log (services/accounts/audit.service.ts). Insert, list and the retention's delete:
 * there is no other update or delete path.
 */
import type { Insertable } from 'kysely';
import type { Executor } from './executor.js';
import type { AuditLogRow, AuditLogTable } from './schema/audit.schema.js';

export async function insertAuditEntry(db: Executor, row: Insertable<AuditLogTable>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export interface AuditQuery {
  accountId: string;
  type?: string;
  memberId?: string;
  /** Entries strictly older than this (created_at, id) position: the cursor of the page before. */
  before?: { createdAt: string; id: string };
  limit: number;
}

/** An account's entries, newest first. */
export async function listAuditEntries(db: Executor, q: AuditQuery): Promise<AuditLogRow[]> {
  let query = db.selectFrom('audit_log').selectAll().where('account_id', '=', q.accountId);
  if (q.type !== undefined) query = query.where('type', '=', q.type);
  if (q.memberId !== undefined) query = query.where('actor_member_id', '=', q.memberId);
  const before = q.before;
  if (before !== undefined)
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', before.createdAt),
        eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)]),
      ]),
    );
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
}

/** The retention: deletes every entry made before `before`. */
export async function deleteAuditEntriesBefore(db: Executor, before: string): Promise<number> {
  const res = await db.deleteFrom('audit_log').where('created_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
