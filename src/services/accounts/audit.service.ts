/**
 * The security log of each account (docs/dashboard.md, "Security log"): an append-only record of
 * who did what, when and from where. Edges (dashboard routes, CLI commands) and services record
 * with `recordAudit` after the action succeeded; owners read it in the dashboard (JSON, paged by
 * cursor, or CSV) and the operator with `mailverdict audit`. Entries are deleted only by the
 * retention sweep, `auditRetentionMs` after they were made.
 *
 * Details are small JSON objects of ids, names and addresses: never a secret, a token or a
 * password.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { deleteAuditEntriesBefore, insertAuditEntry, listAuditEntries } from '../../store/audit.store.js';
import type { Executor } from '../../store/executor.js';
import { listPersonMemberships } from '../../store/person.store.js';
import type { AuditActorKind, AuditLogRow } from '../../store/schema/audit.schema.js';
import type { MemberRole } from '../../store/schema/dashboard.schema.js';
import { csvRows } from '../csv-export.js';
import { randomBase62 } from '../ids.js';

/** Every event the log knows (docs/dashboard.md, "The security log"). */
export const AUDIT_EVENT_TYPES = [
  'sign_in',
  'sign_in_failed',
  // Between a correct password and the second factor (issue 26).
  'sign_in_password_ok',
  'sign_in_second_factor_failed',
  'invitation_created',
  'invitation_accepted',
  'invitation_revoked',
  'member_removed',
  'role_changed',
  'key_created',
  'key_rotated',
  'key_revoked',
  // A mail system's webhook connected or removed (docs/outcomes.md, "Mail systems").
  'outcome_source_created',
  'outcome_source_deleted',
  // An allow or block filter added (or its action changed) or deleted from the dashboard (issue 27).
  'filter_created',
  'filter_deleted',
  // A file of delivery outcomes uploaded on the Outcomes page (issue 27): counts only, no address.
  'outcomes_uploaded',
  'webhook_secret_revealed',
  'webhook_secret_rotated',
  'two_factor_enabled',
  'two_factor_disabled',
  'two_factor_reset',
  'password_changed',
  'password_reset',
  'session_ended',
  // A publishable key reached its daily cap (issue 26): recorded by the product.
  'publishable_cap_reached',
  // The operator console (docs/operators.md).
  'account_created',
  'account_changed',
  'account_suspended',
  'account_resumed',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export function isAuditEventType(value: string): value is AuditEventType {
  return (AUDIT_EVENT_TYPES as readonly string[]).includes(value);
}

/** Who acted: a member (with the address they had then), the operator (CLI) or the product. */
export type AuditActor =
  { kind: 'member'; memberId: string; email: string } | { kind: 'operator' } | { kind: 'system' };

/** Where the request came from (a dashboard request); absent for the CLI. */
export interface AuditOrigin {
  clientIp: string | null;
  userAgent: string | null;
}

/**
 * Who makes a change, for the security log entry the service writes with it, in the change's
 * transaction: a member (with the request's origin) or the operator (the CLI).
 */
export interface ChangeBy {
  actor: AuditActor;
  origin?: AuditOrigin;
}

/**
 * Where a change of a person's own (their password, their second factor) is logged, and by whom:
 * the account their session acts in (what is the person's is no one account's); null when it acts
 * in none.
 */
export type PersonChangeLog = (ChangeBy & { accountId: string }) | null;

/** The CLI acts as the operator. */
export const BY_OPERATOR: ChangeBy = { actor: { kind: 'operator' } };

export type AuditDetails = Readonly<Record<string, string | number | boolean | null>>;

export interface AuditEvent {
  accountId: string;
  type: AuditEventType;
  actor: AuditActor;
  origin?: AuditOrigin;
  details?: AuditDetails;
}

/** The longest User-Agent kept (a header can be kilobytes). */
export const MAX_USER_AGENT = 200;

/** A User-Agent as stored: control characters dropped, at most MAX_USER_AGENT characters. */
export function shortenUserAgent(raw: string | undefined | null): string | null {
  if (raw === undefined || raw === null) return null;
  // eslint-disable-next-line no-control-regex
  const clean = raw.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  return clean === '' ? null : clean.slice(0, MAX_USER_AGENT);
}

/** Appends one entry to the account's security log. */
export async function recordAudit(db: Executor, clock: Clock, event: AuditEvent): Promise<void> {
  const actor = event.actor;
  await insertAuditEntry(db, {
    id: `aud_${randomBase62(16)}`,
    account_id: event.accountId,
    created_at: clock.now().toISOString(),
    type: event.type,
    actor_kind: actor.kind,
    actor_member_id: actor.kind === 'member' ? actor.memberId : null,
    actor_email: actor.kind === 'member' ? actor.email : null,
    client_ip: event.origin?.clientIp ?? null,
    user_agent: shortenUserAgent(event.origin?.userAgent),
    details: JSON.stringify(event.details ?? {}),
  });
}

/**
 * Records an event of the person rather than of one account (a failed sign-in, a password reset,
 * the operator's reset of a second factor) in the log of every account they have joined, each
 * naming their membership there. Nothing when they have joined none.
 */
export async function recordPersonAudit(
  db: Executor,
  clock: Clock,
  person: { id: string; email: string },
  event: Omit<AuditEvent, 'accountId' | 'actor'> & { actor?: AuditActor },
): Promise<void> {
  for (const m of await listPersonMemberships(db, person.id))
    await recordAudit(db, clock, {
      ...event,
      accountId: m.account_id,
      actor: event.actor ?? { kind: 'member', memberId: m.member_id, email: person.email },
    });
}

/** One entry as the dashboard, the CSV and the CLI show it. */
export interface AuditEntryView {
  id: string;
  at: string;
  type: string;
  actor: { kind: AuditActorKind; member_id: string | null; email: string | null };
  client_ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

function toView(row: AuditLogRow): AuditEntryView {
  return {
    id: row.id,
    at: row.created_at,
    type: row.type,
    actor: { kind: row.actor_kind, member_id: row.actor_member_id, email: row.actor_email },
    client_ip: row.client_ip,
    user_agent: row.user_agent,
    details: JSON.parse(row.details) as Record<string, unknown>,
  };
}

export const DEFAULT_AUDIT_PAGE = 50;
export const MAX_AUDIT_PAGE = 500;

export interface AuditFilter {
  type?: string;
  member?: string;
  /** The `next_before` of the page before. */
  before?: string;
  limit?: number;
}

export interface AuditPage {
  entries: AuditEntryView[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: string | null;
}

function encodeCursor(row: AuditLogRow): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string'
    )
      return { createdAt: parsed[0], id: parsed[1] };
  } catch {
    // answered below
  }
  throw new AppError('invalid_request', '`before` is not a cursor this log gave');
}

/** One page of the account's log, newest first (the operator's view: no role check). */
export async function listAudit(db: Executor, accountId: string, filter: AuditFilter): Promise<AuditPage> {
  if (filter.type !== undefined && filter.type !== '' && !isAuditEventType(filter.type))
    throw new AppError('invalid_request', `unknown event type; one of ${AUDIT_EVENT_TYPES.join(', ')}`);
  const limit = filter.limit ?? DEFAULT_AUDIT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE)
    throw new AppError('invalid_request', `limit must be an integer from 1 to ${MAX_AUDIT_PAGE}`);
  const rows = await listAuditEntries(db, {
    accountId,
    ...(filter.type ? { type: filter.type } : {}),
    ...(filter.member ? { memberId: filter.member } : {}),
    ...(filter.before ? { before: decodeCursor(filter.before) } : {}),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  return {
    entries: page.map(toView),
    next_before: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null,
  };
}

function requireOwner(role: MemberRole): void {
  if (role !== 'owner')
    throw new AppError('insufficient_permissions', "only the account's owner can read its security log");
}

/** The dashboard's view: the account's owner only (403 `insufficient_permissions`). */
export async function listAuditForMember(
  db: Executor,
  viewer: { accountId: string; role: MemberRole },
  filter: AuditFilter,
): Promise<AuditPage> {
  requireOwner(viewer.role);
  return listAudit(db, viewer.accountId, filter);
}

/** The most entries one CSV holds (the newest). */
export const MAX_AUDIT_CSV_ROWS = 100_000;

/** The filtered log as CSV (cells neutralised: services/csv-export.ts), owner only. */
export async function auditCsv(
  db: Executor,
  viewer: { accountId: string; role: MemberRole },
  filter: Omit<AuditFilter, 'before' | 'limit'>,
): Promise<string> {
  requireOwner(viewer.role);
  const rows: (string | number)[][] = [
    ['at', 'type', 'actor', 'member_id', 'email', 'client_ip', 'user_agent', 'details'],
  ];
  let before: string | undefined;
  do {
    const page = await listAudit(db, viewer.accountId, {
      ...filter,
      limit: MAX_AUDIT_PAGE,
      ...(before ? { before } : {}),
    });
    for (const e of page.entries)
      rows.push([
        e.at,
        e.type,
        e.actor.kind,
        e.actor.member_id ?? '',
        e.actor.email ?? '',
        e.client_ip ?? '',
        e.user_agent ?? '',
        JSON.stringify(e.details),
      ]);
    before = page.next_before ?? undefined;
  } while (before !== undefined && rows.length <= MAX_AUDIT_CSV_ROWS);
  return csvRows(rows);
}

/** The retention: deletes entries older than `retentionMs`. Returns how many. */
export async function pruneAudit(db: Executor, clock: Clock, retentionMs: number): Promise<number> {
  return deleteAuditEntriesBefore(db, new Date(clock.now().getTime() - retentionMs).toISOString());
}
