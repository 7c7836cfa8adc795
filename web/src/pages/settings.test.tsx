import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { InviteBody, Member } from '../api/contract';
import { FakeServer, failure, ok } from '../test/fake-server';
import { renderApp } from '../test/render';

const owner: Member = {
  id: 'mem_owner',
  email: 'owner@example.com',
  role: 'owner',
  created_at: '2026-01-01T00:00:00.000Z',
  joined_at: '2026-01-01T00:00:00.000Z',
};

function settingsServer() {
  let members: Member[] = [
    owner,
    {
      id: 'mem_2',
      email: 'bob@example.com',
      role: 'member',
      created_at: '2026-01-02T00:00:00.000Z',
      joined_at: '2026-01-02T00:00:00.000Z',
    },
  ];
  let secret = 'whsec_first_1234';
  return new FakeServer({
    'GET /members': () => ok({ members }),
    'POST /members': (call) => {
      const member: Member = {
        id: 'mem_3',
        email: (call.body as InviteBody).email,
        role: 'member',
        created_at: '2026-01-03T00:00:00.000Z',
        joined_at: null,
      };
      members = [...members, member];
      return ok(
        {
          member,
          link: 'http://127.0.0.1:8080/accept-invite#tok123',
          expires_at: '2026-01-04T00:00:00.000Z',
          emailed: false,
        },
        201,
      );
    },
    'DELETE /members/:id': (_, { id }) => {
      members = members.filter((m) => m.id !== id);
      return { status: 204 };
    },
    'GET /settings': () =>
      ok({
        notification_email: 'owner@example.com',
        webhook_secret_hint: secret.slice(-4),
        relay_configured: false,
      }),
    'PUT /settings': (call) =>
      ok({ ...(call.body as object), webhook_secret_hint: secret.slice(-4), relay_configured: false }),
    'POST /settings/webhook-secret/reveal': () => ok({ webhook_secret: secret }),
    'POST /settings/webhook-secret/rotate': () => {
      secret = 'whsec_second_9876';
      return ok({ webhook_secret: secret });
    },
    'POST /account/password': (call) =>
      (call.body as { current_password: string }).current_password === 'old password 1'
        ? { status: 204 }
        : failure(401, 'invalid_credentials', 'The current password is wrong.'),
  });
}

describe('settings page', () => {
  it("shows the owner the account's id, which the command line needs", async () => {
    renderApp('/settings', settingsServer());
    const section = (await screen.findByRole('heading', { name: 'Account' })).closest(
      'section',
    ) as HTMLElement;
    expect(within(section).getByLabelText('Account id')).toHaveValue('acc_1');
    expect(section).toHaveTextContent('mailverdict keys create --account acc_1');
  });

  it('invites a member and shows the link to pass on', async () => {
    const server = settingsServer();
    const { user } = renderApp('/settings', server);
    await user.type(await screen.findByLabelText('E-mail address to invite'), 'carol@example.com');
    await user.click(screen.getByRole('button', { name: 'Invite' }));
    expect(await screen.findByLabelText('Invitation link')).toHaveValue(
      'http://127.0.0.1:8080/accept-invite#tok123',
    );
    const members = screen.getByRole('heading', { name: 'Members' }).closest('section') as HTMLElement;
    await user.click(within(members).getByRole('button', { name: 'Copy' }));
    expect(await navigator.clipboard.readText()).toBe('http://127.0.0.1:8080/accept-invite#tok123');
    const table = screen.getByRole('table', { name: 'Members' });
    const row = (await within(table).findByRole('rowheader', { name: 'carol@example.com' })).closest(
      'tr',
    ) as HTMLElement;
    expect(within(row).getByText('Invited')).toBeInTheDocument();
    expect(server.callsTo('POST', '/members')[0]?.body).toEqual({ email: 'carol@example.com' });
  });

  it('removes a member after confirmation; the owner and oneself cannot be removed', async () => {
    const server = settingsServer();
    const { user } = renderApp('/settings', server);
    const table = await screen.findByRole('table', { name: 'Members' });
    expect(within(table).queryByRole('button', { name: 'Remove owner@example.com' })).not.toBeInTheDocument();
    await user.click(within(table).getByRole('button', { name: 'Remove bob@example.com' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Remove bob@example.com?' });
    expect(confirm).toHaveTextContent('They are signed out at once');
    await user.click(within(confirm).getByRole('button', { name: 'Remove member' }));
    await waitFor(() => expect(within(table).queryByText('bob@example.com')).not.toBeInTheDocument());
    expect(server.callsTo('DELETE', '/members/mem_2')).toHaveLength(1);
  });

  it('reveals the webhook secret on demand and rotates it after confirmation', async () => {
    const server = settingsServer();
    const { user } = renderApp('/settings', server);
    expect(await screen.findByText('…1234')).toBeInTheDocument();
    expect(screen.queryByLabelText('Current signing secret')).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Reveal secret' }));
    expect(await screen.findByLabelText('Current signing secret')).toHaveValue('whsec_first_1234');

    await user.click(screen.getByRole('button', { name: 'Rotate secret' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Rotate the webhook signing secret?' });
    await user.click(within(confirm).getByRole('button', { name: 'Rotate secret' }));
    await waitFor(() =>
      expect(screen.getByLabelText('Current signing secret')).toHaveValue('whsec_second_9876'),
    );
    expect(await screen.findByText('…9876')).toBeInTheDocument();
  });

  it('saves the notification address', async () => {
    const server = settingsServer();
    const { user } = renderApp('/settings', server);
    const field = await screen.findByLabelText('Notification e-mail address');
    await waitFor(() => expect(field).toHaveValue('owner@example.com'));
    await user.clear(field);
    await user.type(field, 'ops@example.com');
    await user.click(screen.getByRole('button', { name: 'Save address' }));
    expect(await screen.findByText('Saved.')).toBeInTheDocument();
    expect(server.callsTo('PUT', '/settings')[0]?.body).toEqual({ notification_email: 'ops@example.com' });
  });

  it('changes the password, checking the new one twice and the current one on the server', async () => {
    const server = settingsServer();
    const { user } = renderApp('/settings', server);
    const section = (await screen.findByRole('heading', { name: 'Change password' })).closest(
      'section',
    ) as HTMLElement;
    const form = within(section);
    await user.type(form.getByLabelText('Current password'), 'wrong password');
    await user.type(form.getByLabelText('New password'), 'a new long password');
    await user.type(form.getByLabelText('Repeat the new password'), 'a new long passw0rd');
    await user.click(form.getByRole('button', { name: 'Change password' }));
    expect(form.getByRole('alert')).toHaveTextContent('The two passwords are not the same.');
    expect(server.callsTo('POST', '/account/password')).toHaveLength(0);

    await user.clear(form.getByLabelText('Repeat the new password'));
    await user.type(form.getByLabelText('Repeat the new password'), 'a new long password');
    await user.click(form.getByRole('button', { name: 'Change password' }));
    expect(await form.findByRole('alert')).toHaveTextContent(
      /^Could not change the password: The current password is wrong\. \(request req_/,
    );

    await user.clear(form.getByLabelText('Current password'));
    await user.type(form.getByLabelText('Current password'), 'old password 1');
    await user.click(form.getByRole('button', { name: 'Change password' }));
    expect(await form.findByText('Your password was changed.')).toBeInTheDocument();
    expect(server.callsTo('POST', '/account/password').at(-1)?.body).toEqual({
      current_password: 'old password 1',
      new_password: 'a new long password',
    });
  });
});
