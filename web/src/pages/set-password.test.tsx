import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { overview } from '../test/fixtures';
import { renderApp } from '../test/render';

const noSession = () =>
  new FakeServer({
    'GET /session': failure(401, 'unauthenticated', 'No session.'),
    'GET /overview': ok(overview()),
  });

describe('accepting an invitation', () => {
  it('shows the invited address, asks for the password twice, and signs in', async () => {
    window.history.replaceState(null, '', '/accept-invite#tok%2B123');
    const server = noSession().on(
      'POST /invitations/preview',
      ok({ email: 'carol@example.com', expires_at: '2026-01-04T00:00:00.000Z' }),
    );
    server.on('POST /invitations/accept', ok(session({ csrf_token: 'csrf-after-invite' })));
    const app = renderApp('/accept-invite', server);
    expect(await screen.findByText('carol@example.com')).toBeInTheDocument();
    expect(server.callsTo('POST', '/invitations/preview')[0]?.body).toEqual({ token: 'tok+123' });

    await app.user.type(screen.getByLabelText('New password'), 'short');
    await app.user.type(screen.getByLabelText('Repeat the password'), 'short');
    await app.user.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(screen.getByRole('alert')).toHaveTextContent('The password needs at least 10 characters.');

    await app.user.clear(screen.getByLabelText('New password'));
    await app.user.clear(screen.getByLabelText('Repeat the password'));
    await app.user.type(screen.getByLabelText('New password'), 'long enough password');
    await app.user.type(screen.getByLabelText('Repeat the password'), 'long enough password');
    await app.user.click(screen.getByRole('button', { name: 'Set password and sign in' }));

    expect(await screen.findByRole('heading', { name: 'Overview' })).toBeInTheDocument();
    expect(app.at()).toBe('/');
    expect(server.callsTo('POST', '/invitations/accept')[0]?.body).toEqual({
      token: 'tok+123',
      password: 'long enough password',
    });
    // The new session's token is the one sent from now on.
    server.on('DELETE /session', { status: 204 });
    await app.user.click(screen.getByRole('button', { name: 'Sign out' }));
    await waitFor(() => expect(server.callsTo('DELETE', '/session')).toHaveLength(1));
    expect(server.callsTo('DELETE', '/session')[0]?.headers['x-csrf-token']).toBe('csrf-after-invite');
  });

  it('says an expired or used invitation is not valid any more', async () => {
    window.history.replaceState(null, '', '/accept-invite#used');
    const server = noSession().on(
      'POST /invitations/preview',
      failure(404, 'not_found', 'No such invitation.'),
    );
    renderApp('/accept-invite', server);
    expect(await screen.findByRole('alert')).toHaveTextContent('This invitation is not valid any more');
    expect(screen.queryByLabelText('New password')).not.toBeInTheDocument();
  });

  it('says a link without its token is incomplete', async () => {
    renderApp('/accept-invite', noSession());
    expect(await screen.findByRole('alert')).toHaveTextContent('This link is incomplete');
  });
});

describe('resetting a password', () => {
  it('sets the new password with the token from the link and signs in', async () => {
    window.history.replaceState(null, '', '/reset-password#reset-tok');
    const server = noSession().on('POST /password-resets/accept', ok(session()));
    const app = renderApp('/reset-password', server);
    expect(await screen.findByRole('heading', { name: 'Choose a new password' })).toBeInTheDocument();
    await app.user.type(screen.getByLabelText('New password'), 'another good password');
    await app.user.type(screen.getByLabelText('Repeat the password'), 'another good password');
    await app.user.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(await screen.findByRole('heading', { name: 'Overview' })).toBeInTheDocument();
    expect(server.callsTo('POST', '/password-resets/accept')[0]?.body).toEqual({
      token: 'reset-tok',
      password: 'another good password',
    });
  });

  it('asks for a reset link and answers the same whatever the address', async () => {
    const server = noSession().on('POST /password-resets', { status: 202 });
    const app = renderApp('/forgot-password', server);
    await app.user.type(await screen.findByLabelText('E-mail'), 'who@example.com');
    await app.user.click(screen.getByRole('button', { name: 'Send reset link' }));
    expect(await screen.findByRole('status')).toHaveTextContent('If who@example.com belongs to a member');
    expect(server.callsTo('POST', '/password-resets')[0]?.body).toEqual({ email: 'who@example.com' });
  });
});
