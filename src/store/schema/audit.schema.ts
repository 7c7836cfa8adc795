/**
 * The security log of each account (migration 0009; docs/dashboard.md, "Security log").
 * Append-only: rows are inserted, and deleted only by the retention sweep.
 */
import type { Selectable } from 'kysely';

export type AuditActorKind = 'member' | 'operator' | 'system';

export interface AuditLogTable {
  /** `aud_<base62>`. */
  id: string;
  account_id: string;
  /** ISO 8601 UTC; entries are listed newest first by (created_at, id). */
  created_at: string;
  /** One of AUDIT_EVENT_TYPES (services/accounts/audit.service.ts). */
  type: string;
  actor_kind: AuditActorKind;
  /** The member who acted (kept after the member is removed: no foreign key). */
  actor_member_id: string | null;
  /** The member's address at the time. */
  actor_email: string | null;
  client_ip: string | null;
  /** Shortened to 200 characters. */
  user_agent: string | null;
  /** A small JSON object (never a secret or a password). */
  details: string;
}

export interface AuditTables {
  audit_log: AuditLogTable;
}

export type AuditLogRow = Selectable<AuditLogTable>;
