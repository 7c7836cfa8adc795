/**
 * The sessions page (docs/dashboard.md, "Sessions"): a member's signed-in sessions, with the
 * device and browser read from the User-Agent stored at sign-in, and ending one of them. A person
 * sees and ends only their own, whichever account each acts in. The stored id (SHA-256 of the cookie's secret) never leaves the
 * server: the page knows each session by a digest of it.
 */
import { createHash } from 'node:crypto';
import Bowser from 'bowser';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import type { SessionRow } from '../../store/schema/dashboard.schema.js';
import { deletePersonSession, listPersonSessions } from '../../store/session.store.js';
import { recordAudit, type AuditOrigin } from '../accounts/audit.service.js';
import type { PersonSession } from './sessions.service.js';

export interface SessionItem {
  /** A digest of the stored id, for DELETE /sessions/:id. */
  id: string;
  /** "Chrome 120", or null when the User-Agent names no browser. */
  browser: string | null;
  /** "Linux", "macOS 14.1", "Android 14"… */
  os: string | null;
  /** desktop, mobile, tablet, tv… */
  device: string | null;
  user_agent: string | null;
  client_ip: string | null;
  created_at: string;
  last_seen_at: string;
  /** The session the request came with. */
  current: boolean;
}

function publicId(storedId: string): string {
  return createHash('sha256').update(`session-view\n${storedId}`).digest('base64url').slice(0, 22);
}

function join(...parts: (string | undefined)[]): string | null {
  const text = parts.filter((p) => p !== undefined && p !== '').join(' ');
  return text === '' ? null : text;
}

/** Browser, system and device type of a User-Agent (bowser, MIT). */
export function describeUserAgent(ua: string | null): Pick<SessionItem, 'browser' | 'os' | 'device'> {
  if (ua === null) return { browser: null, os: null, device: null };
  const parsed = Bowser.parse(ua);
  return {
    browser: join(parsed.browser.name, parsed.browser.version?.split('.')[0]),
    os: join(parsed.os.name, parsed.os.versionName ?? parsed.os.version),
    device: parsed.platform.type ?? null,
  };
}

function toItem(row: SessionRow, currentId: string): SessionItem {
  return {
    id: publicId(row.id),
    ...describeUserAgent(row.user_agent),
    user_agent: row.user_agent,
    client_ip: row.client_ip,
    created_at: row.created_at,
    last_seen_at: row.last_seen_at,
    current: row.id === currentId,
  };
}

/** The signed-in member's sessions, newest first (ended and expired ones are gone or skipped). */
export async function listOwnSessions(
  db: Executor,
  clock: Clock,
  session: Pick<PersonSession, 'personId' | 'sessionId'>,
): Promise<SessionItem[]> {
  const now = clock.now().toISOString();
  const rows = await listPersonSessions(db, session.personId);
  return rows.filter((r) => r.expires_at > now).map((r) => toItem(r, session.sessionId));
}

/**
 * Ends one of the member's own sessions (404 `not_found` for any other id: another member's
 * session is not theirs to know of). Recorded in the security log.
 */
export async function endOwnSession(
  db: Executor,
  clock: Clock,
  session: Pick<PersonSession, 'personId' | 'memberId' | 'sessionId' | 'accountId' | 'email'>,
  id: string,
  origin: AuditOrigin,
): Promise<void> {
  const rows = await listPersonSessions(db, session.personId);
  const target = rows.find((r) => publicId(r.id) === id);
  if (!target || !(await deletePersonSession(db, session.personId, target.id)))
    throw new AppError('not_found', `no session ${id}`);
  // In the log of the account the session acts in (none for an operator in no account).
  if (session.accountId === null || session.memberId === null) return;
  await recordAudit(db, clock, {
    accountId: session.accountId,
    type: 'session_ended',
    actor: { kind: 'member', memberId: session.memberId, email: session.email },
    origin,
    details: { own_session: target.id === session.sessionId },
  });
}
