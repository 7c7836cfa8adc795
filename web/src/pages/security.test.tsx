import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { AuditEntry, SessionItem } from '../api/contract';
import { FakeServer, ok, session } from '../test/fake-server';
import { renderApp } from '../test/render';

const base = {
  user_agent: null,
  client_ip: '192.0.2.1',
  created_at: '2026-01-01T00:00:00.000Z',
  last_seen_at: '2026-01-01T01:00:00.000Z',
};

function entry(n: number, type: string): AuditEntry {
  return {
    id: `aud_${n}`,
    at: `2026-01-0${(n % 9) + 1}T00:00:00.000Z`,
    type,
    actor: { kind: 'member', member_id: 'mem_owner', email: 'owner@example.com' },
    client_ip: '192.0.2.1',
    user_agent: null,
    details: {},
  };
}

describe('sessions and the security log', () => {
  it('lists the sessions with this one marked, and ends another', async () => {
    let sessions: SessionItem[] = [
      { ...base, id: 's1', browser: 'Chrome 120', os: 'Linux', device: 'desktop', current: true },
      { ...base, id: 's2', browser: 'Safari 17', os: 'iOS 17.1', device: 'mobile', current: false },
    ];
    const server = new FakeServer({
      'GET /members': ok({ members: [] }),
      'GET /settings': ok({
        notification_email: 'o@example.com',
        webhook_secret_hint: 'abcd',
        relay_configured: false,
      }),
      'GET /sessions': () => ok({ sessions }),
      'DELETE /sessions/:id': (_, { id }) => {
        sessions = sessions.filter((s) => s.id !== id);
        return { status: 204 };
      },
    });
    const { user } = renderApp('/settings', server);
    const table = await screen.findByRole('table', { name: 'Sessions' });
    expect(await within(table).findByText('this session')).toBeInTheDocument();
    expect(
      within(table).queryByRole('button', { name: 'End session Chrome 120 on Linux' }),
    ).not.toBeInTheDocument();
    await user.click(within(table).getByRole('button', { name: 'End session Safari 17 on iOS 17.1' }));
    await waitFor(() => expect(within(table).queryByText(/Safari 17/)).not.toBeInTheDocument());
    expect(server.callsTo('DELETE', '/sessions/s2')).toHaveLength(1);
  });

  it('shows the owner the log a page at a time, filtered by event', async () => {
    const server = new FakeServer({
      'GET /audit': (call) =>
        call.query.get('before') === 'c1'
          ? ok({ entries: [entry(2, 'key_created')], next_before: null })
          : call.query.get('type') === 'sign_in'
            ? ok({ entries: [entry(3, 'sign_in')], next_before: null })
            : ok({ entries: [entry(1, 'password_changed')], next_before: 'c1' }),
    });
    const { user } = renderApp('/settings/security-log', server);
    const table = await screen.findByRole('table', { name: 'Security log' });
    expect(await within(table).findByRole('rowheader', { name: 'Password changed' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Older entries' }));
    expect(await within(table).findByRole('rowheader', { name: 'Key created' })).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText('Event'), 'sign_in');
    expect(await screen.findByRole('rowheader', { name: 'Signed in' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Download CSV' })).toHaveAttribute(
      'href',
      expect.stringContaining('/audit.csv?type=sign_in'),
    );
  });

  it('tells a member who is not the owner that the log is the owner’s', async () => {
    const server = new FakeServer();
    server.on('GET /session', () => ok(session({ member: { ...session().member!, role: 'member' } })));
    renderApp('/settings/security-log', server);
    expect(await screen.findByText(/Only the account's owner/)).toBeInTheDocument();
    expect(server.callsTo('GET', '/audit')).toHaveLength(0);
  });
});
