/**
 * The member's own signed-in sessions (a section of Settings: end any of them) and the account's
 * security log (its own page, owner only: filters, paging by cursor, CSV download).
 *
 * Accessible names: heading "Sessions", table "Sessions" with buttons "End session <browser> on
 * <system>", the current one marked "this session"; heading "Security log", fields "Event" and
 * "Member", link "Download CSV", table "Security log", button "Older entries".
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AuditEventType, SessionItem } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { useSession } from '../api/queries';
import { formatDateTime } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';

const SESSIONS_KEY = ['sessions'] as const;

function describe(s: SessionItem): string {
  return `${s.browser ?? 'Unknown browser'} on ${s.os ?? 'an unknown system'}`;
}

export function SessionsSection() {
  const api = useEndpoints();
  const client = useQueryClient();
  const sessions = useQuery({ queryKey: SESSIONS_KEY, queryFn: api.sessions });
  const end = useMutation({
    mutationFn: (s: SessionItem) => api.endSession(s.id),
    onSuccess: () => client.invalidateQueries({ queryKey: SESSIONS_KEY }),
  });
  return (
    <section className="panel" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p className="muted small">Where you are signed in. Ending a session signs that browser out.</p>
      {sessions.isPending ? <Loading what="your sessions" /> : null}
      <ErrorMessage action="Could not load your sessions" error={sessions.data ? null : sessions.error} />
      <ErrorMessage action="Could not end the session" error={end.error} />
      {sessions.data ? (
        <TableScroll label="Sessions">
          <table className="table">
            <caption className="sr-only">Sessions</caption>
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Device</th>
                <th scope="col">Address</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.sessions.map((s) => (
                <tr key={s.id}>
                  <th scope="row" className="cell-name" title={s.user_agent ?? undefined}>
                    {describe(s)}
                    {s.current ? <span className="badge"> this session</span> : null}
                  </th>
                  <td>{s.device ?? '—'}</td>
                  <td className="nowrap">{s.client_ip ?? '—'}</td>
                  <td className="nowrap">{formatDateTime(s.created_at)}</td>
                  <td className="nowrap">{formatDateTime(s.last_seen_at)}</td>
                  <td className="cell-actions">
                    {s.current ? null : (
                      <button
                        type="button"
                        className="button button-small button-danger-outline"
                        aria-label={`End session ${describe(s)}`}
                        disabled={end.isPending}
                        onClick={() => end.mutate(s)}
                      >
                        End
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
    </section>
  );
}

/** Every event type with its words; `satisfies` fails the typecheck when the server gains one. */
const EVENT_LABELS = {
  sign_in: 'Signed in',
  sign_in_failed: 'Sign-in failed',
  sign_in_password_ok: 'Password accepted, second factor asked',
  sign_in_second_factor_failed: 'Wrong two-factor code',
  invitation_created: 'Invitation made',
  invitation_accepted: 'Invitation accepted',
  invitation_revoked: 'Invitation revoked',
  member_removed: 'Member removed',
  role_changed: 'Role changed',
  key_created: 'Key created',
  key_rotated: 'Key rotated',
  key_revoked: 'Key revoked',
  outcome_source_created: 'Mail system connected',
  outcome_source_deleted: 'Mail system removed',
  filter_created: 'Filter added',
  filter_deleted: 'Filter deleted',
  outcomes_uploaded: 'Outcomes uploaded',
  webhook_secret_revealed: 'Webhook secret revealed',
  webhook_secret_rotated: 'Webhook secret rotated',
  two_factor_enabled: 'Two-factor sign-in on',
  two_factor_disabled: 'Two-factor sign-in off',
  two_factor_reset: 'Two-factor sign-in reset',
  password_changed: 'Password changed',
  password_reset: 'Password reset',
  session_ended: 'Session ended',
  publishable_cap_reached: 'Publishable key reached its daily cap',
  account_created: 'Account created',
  account_changed: 'Account changed by the operator',
  account_suspended: 'Account suspended',
  account_resumed: 'Account resumed',
} satisfies Record<AuditEventType, string>;

const label = (type: string): string => (EVENT_LABELS as Record<string, string>)[type] ?? type;

export function SecurityLogPage() {
  const api = useEndpoints();
  const me = useSession().data?.member;
  const [type, setType] = useState('');
  const [member, setMember] = useState('');
  const filter = { ...(type ? { type } : {}), ...(member.trim() ? { member: member.trim() } : {}) };
  const log = useInfiniteQuery({
    queryKey: ['audit', filter],
    queryFn: ({ pageParam }) => api.audit({ ...filter, ...(pageParam ? { before: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_before,
    enabled: me?.role === 'owner',
  });
  if (me && me.role !== 'owner')
    return (
      <>
        <PageTitle title="Security log">Security log</PageTitle>
        <p className="notice">Only the account&apos;s owner can read its security log.</p>
      </>
    );
  const entries = log.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <>
      <PageTitle title="Security log">Security log</PageTitle>
      <section className="panel">
        <div className="form form-inline">
          <div className="field">
            <label htmlFor="audit-type">Event</label>
            <select id="audit-type" className="input" value={type} onChange={(e) => setType(e.target.value)}>
              <option value="">All events</option>
              {Object.entries(EVENT_LABELS).map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </div>
          <div className="field grow">
            <label htmlFor="audit-member">Member</label>
            <input
              id="audit-member"
              className="input"
              placeholder="member id (mem_…)"
              maxLength={100}
              value={member}
              onChange={(e) => setMember(e.target.value)}
            />
          </div>
          <a className="button" href={api.auditCsvUrl(filter)} download>
            Download CSV
          </a>
        </div>
        {log.isPending ? <Loading what="the security log" /> : null}
        <ErrorMessage action="Could not load the security log" error={log.error} />
        {log.data && entries.length === 0 ? <EmptyState>No entries.</EmptyState> : null}
        {entries.length > 0 ? (
          <TableScroll label="Security log">
            <table className="table">
              <caption className="sr-only">Security log</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Who</th>
                  <th scope="col">From</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.id}>
                    <td className="nowrap">{formatDateTime(e.at)}</td>
                    <th scope="row">{label(e.type)}</th>
                    <td>{e.actor.kind === 'member' ? e.actor.email : e.actor.kind}</td>
                    <td className="nowrap" title={e.user_agent ?? undefined}>
                      {e.client_ip ?? '—'}
                    </td>
                    <td className="small">
                      {Object.keys(e.details).length === 0 ? '' : JSON.stringify(e.details)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        ) : null}
        {log.hasNextPage ? (
          <button
            type="button"
            className="button"
            disabled={log.isFetchingNextPage}
            onClick={() => void log.fetchNextPage()}
          >
            Older entries
          </button>
        ) : null}
      </section>
    </>
  );
}
