import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { overview } from '../test/fixtures';
import { renderApp } from '../test/render';

const twoAccounts = () =>
  session({
    memberships: [
      {
        account_id: 'acc_1',
        member_id: 'mem_owner',
        plan: 'starter',
        notification_email: 'owner@example.com',
        role: 'owner',
        current: true,
      },
      {
        account_id: 'acc_2',
        member_id: 'mem_two',
        plan: 'growth',
        notification_email: 'agency@example.com',
        role: 'member',
        current: false,
      },
    ],
  });

describe('a person in several accounts', () => {
  it('shows the account switcher with every account, and switches with the session’s token', async () => {
    const server = new FakeServer({ 'GET /session': ok(twoAccounts()), 'GET /overview': ok(overview()) });
    server.on(
      'POST /session/account',
      ok(session({ account: { id: 'acc_2', plan: 'growth', notification_email: 'agency@example.com' } })),
    );
    const app = renderApp('/', server);
    const switcher = await screen.findByLabelText('Account');
    expect(switcher.querySelectorAll('option')).toHaveLength(2);
    await app.user.selectOptions(switcher, 'acc_2');
    await waitFor(() => expect(server.callsTo('POST', '/session/account')).toHaveLength(1));
    expect(server.callsTo('POST', '/session/account')[0]?.body).toEqual({ account_id: 'acc_2' });
    expect(server.callsTo('POST', '/session/account')[0]?.headers['x-csrf-token']).toBe('csrf-token-1');
  });

  it('shows no switcher with one account', async () => {
    renderApp('/', new FakeServer({ 'GET /session': ok(session()), 'GET /overview': ok(overview()) }));
    expect(await screen.findByRole('heading', { name: 'Overview' })).toBeInTheDocument();
    expect(screen.queryByLabelText('Account')).toBeNull();
  });

  it('asks a person who has a password to sign in before joining, once setting one is refused', async () => {
    window.history.replaceState(null, '', '/accept-invite#tok');
    const server = new FakeServer({
      'GET /session': failure(401, 'unauthenticated', 'No session.'),
      'POST /invitations/preview': ok({ email: 'owner@example.com', expires_at: '2026-01-04T00:00:00.000Z' }),
      'POST /invitations/accept': failure(401, 'unauthenticated', 'this address has a password already'),
    });
    const app = renderApp('/accept-invite', server);
    // The preview says nothing of a password: both ways in are offered.
    expect(
      await screen.findByRole('link', { name: 'I have a password here: sign in to accept' }),
    ).toBeInTheDocument();
    await app.user.type(screen.getByLabelText('New password'), 'a new password here');
    await app.user.type(screen.getByLabelText('Repeat the password'), 'a new password here');
    await app.user.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(await screen.findByRole('link', { name: 'Sign in to accept' })).toBeInTheDocument();
    expect(screen.queryByLabelText('New password')).toBeNull();
  });

  it('joins with one button when signed in as the invited person', async () => {
    window.history.replaceState(null, '', '/accept-invite#tok');
    const server = new FakeServer({
      'GET /session': ok(session({ person: { id: 'per_1', email: 'owner@example.com', operator: false } })),
      'GET /overview': ok(overview()),
      'POST /invitations/preview': ok({ email: 'owner@example.com', expires_at: '2026-01-04T00:00:00.000Z' }),
      'POST /invitations/join': ok(twoAccounts()),
    });
    const app = renderApp('/accept-invite', server);
    await app.user.click(await screen.findByRole('button', { name: 'Join the account' }));
    expect(await screen.findByRole('heading', { name: 'Overview' })).toBeInTheDocument();
    expect(server.callsTo('POST', '/invitations/join')[0]?.body).toEqual({ token: 'tok' });
  });

  it('takes an operator who belongs to no account to the console, with no account pages in the menu', async () => {
    const operator = session({
      person: { id: 'per_ops', email: 'ops@example.com', operator: true },
      account: null,
      member: null,
      memberships: [],
      two_factor: { enabled: true, required: true },
    });
    const server = new FakeServer({
      'GET /session': ok(operator),
      'GET /operator/accounts': ok({ accounts: [], plans: ['free'] }),
      'GET /operator/health': failure(503, 'service_unavailable', 'later'),
    });
    const app = renderApp('/', server);
    expect(await screen.findByRole('heading', { name: 'Operator console' })).toBeInTheDocument();
    expect(app.at()).toBe('/operator');
    const nav = screen.getByRole('navigation', { name: 'Main' });
    expect(nav.querySelectorAll('a')).toHaveLength(0);
  });
});
