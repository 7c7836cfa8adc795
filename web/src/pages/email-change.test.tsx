import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { renderApp } from '../test/render';

const emailSection = async () =>
  (await screen.findByRole('heading', { name: 'Sign-in address' })).closest('section') as HTMLElement;

function settingsServer() {
  return new FakeServer({
    'GET /members': ok({ members: [] }),
    'GET /settings': ok({
      notification_email: 'owner@example.com',
      webhook_secret_hint: 'whsec_…1234',
      relay: false,
    }),
  });
}

describe('changing the sign-in address', () => {
  it('asks the password and changes the address at once without a relay', async () => {
    const server = settingsServer();
    let email = 'owner@example.com';
    server.on('GET /session', () => ok(session({ person: { id: 'per_owner', email, operator: false } })));
    server.on('POST /account/email', (call) => {
      const body = call.body as { email: string; password: string };
      if (body.password !== 'my password 1')
        return failure(401, 'invalid_credentials', 'The password is wrong.');
      email = body.email;
      return ok({ status: 'changed', email });
    });
    const { user } = renderApp('/settings', server);
    const section = within(await emailSection());
    expect(section.getByText('owner@example.com')).toBeInTheDocument();
    await user.type(section.getByLabelText('New address'), 'new@example.com');
    await user.type(section.getByLabelText('Your current password'), 'wrong');
    await user.click(section.getByRole('button', { name: 'Change address' }));
    expect(await section.findByRole('alert')).toHaveTextContent(
      /^Could not change the address: The password is wrong\./,
    );

    await user.clear(section.getByLabelText('Your current password'));
    await user.type(section.getByLabelText('Your current password'), 'my password 1');
    await user.click(section.getByRole('button', { name: 'Change address' }));
    expect(await section.findByRole('status')).toHaveTextContent(
      'You sign in with new@example.com from now on.',
    );
    expect(await section.findByText('new@example.com', { selector: 'strong' })).toBeInTheDocument();
    expect(server.callsTo('POST', '/account/email').at(-1)?.body).toEqual({
      email: 'new@example.com',
      password: 'my password 1',
    });
  });

  it('says the link was e-mailed when a relay confirms the new address', async () => {
    const server = settingsServer().on(
      'POST /account/email',
      ok({
        status: 'confirm_by_link',
        email: 'new@example.com',
        emailed: true,
        expires_at: '2026-01-02T00:00:00.000Z',
      }),
    );
    const { user } = renderApp('/settings', server);
    const section = within(await emailSection());
    await user.type(section.getByLabelText('New address'), 'new@example.com');
    await user.type(section.getByLabelText('Your current password'), 'my password 1');
    await user.click(section.getByRole('button', { name: 'Change address' }));
    expect(await section.findByRole('status')).toHaveTextContent(
      'A link was e-mailed to new@example.com: open it to confirm the address. Until then you sign in with owner@example.com.',
    );
  });

  it('confirms the new address from the link', async () => {
    window.history.replaceState(null, '', '/confirm-email#tok123');
    const server = new FakeServer({
      'GET /session': failure(401, 'unauthenticated', 'No session.'),
      'POST /email-changes/accept': ok({ email: 'new@example.com' }),
    });
    renderApp('/confirm-email', server);
    expect(await screen.findByRole('status')).toHaveTextContent(
      'Done: you sign in with new@example.com from now on.',
    );
    expect(server.callsTo('POST', '/email-changes/accept')[0]?.body).toEqual({ token: 'tok123' });
  });
});
