import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { SecondFactorBody, TwoFactorStatus } from '../api/contract';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { renderApp } from '../test/render';

const OFF: TwoFactorStatus = {
  enabled: false,
  enabled_at: null,
  recovery_codes_left: 0,
  account_requires: false,
};
const CODES = Array.from({ length: 10 }, (_, i) => `abcd-efgh-jkmn-pq${String(i).padStart(2, '0')}`);

describe('two-factor sign-in', () => {
  it('asks for a code after the password, and signs in only once the code passes', async () => {
    let signedIn = false;
    const server = new FakeServer({
      'GET /session': () =>
        signedIn ? ok(session()) : failure(401, 'unauthenticated', 'sign in to use the dashboard'),
      'POST /session': ok(
        { second_factor_required: true, challenge: 'chal-1', expires_at: '2026-01-01T00:05:00.000Z' },
        202,
      ),
      'POST /session/second-factor': (call) => {
        if ((call.body as SecondFactorBody).code !== '123456')
          return failure(401, 'invalid_credentials', 'the code is not correct');
        signedIn = true;
        return ok(session());
      },
      'GET /overview': failure(500, 'internal_error', 'not needed here'),
    });
    const { user, at } = renderApp('/sign-in', server);
    await user.type(await screen.findByLabelText('E-mail'), 'owner@example.com');
    await user.type(screen.getByLabelText('Password'), 'a long password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));

    const field = await screen.findByLabelText('Authentication code');
    await user.type(field, '000000');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('the code is not correct');
    expect(at()).toBe('/sign-in');

    await user.clear(field);
    await user.type(field, '123456');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(at()).toBe('/'));
    expect(server.callsTo('POST', '/session/second-factor').map((c) => c.body)).toEqual([
      { challenge: 'chal-1', code: '000000' },
      { challenge: 'chal-1', code: '123456' },
    ]);
  });

  it('turns TOTP on from the settings page: QR code, secret, first code, recovery codes once', async () => {
    let status = OFF;
    const server = new FakeServer({
      'GET /members': ok({ members: [] }),
      'GET /settings': ok({
        notification_email: 'o@example.com',
        webhook_secret_hint: '…abcd',
        relay_configured: false,
      }),
      'GET /account/two-factor': () => ok(status),
      'POST /account/two-factor/enrolment': ok({
        secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        otpauth_uri: 'otpauth://totp/mailverdict:o%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        qr_svg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"></svg>',
      }),
      'POST /account/two-factor/enrolment/confirm': () => {
        status = {
          enabled: true,
          enabled_at: '2026-01-02T00:00:00.000Z',
          recovery_codes_left: 10,
          account_requires: false,
        };
        return ok({ recovery_codes: CODES });
      },
    });
    const { user } = renderApp('/settings', server);
    await user.click(await screen.findByRole('button', { name: 'Turn on two-factor sign-in' }));
    const qr = await screen.findByRole('img', { name: 'QR code for your authenticator app' });
    expect(qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(screen.getByLabelText('Secret key')).toHaveValue('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP');
    await user.type(screen.getByLabelText('Code from the app'), '654321');
    await user.type(screen.getByLabelText('Your password'), 'correct horse battery');
    await user.click(screen.getByRole('button', { name: 'Confirm' }));
    const list = await screen.findByRole('list', { name: 'Recovery codes' });
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(CODES);
    await user.click(screen.getByRole('button', { name: 'I have saved the codes' }));
    expect(await screen.findByText(/10 of 10 recovery codes left/)).toBeInTheDocument();
    expect(screen.queryByRole('list', { name: 'Recovery codes' })).not.toBeInTheDocument();
    expect(server.callsTo('POST', '/account/two-factor/enrolment/confirm')[0]?.body).toEqual({
      code: '654321',
      password: 'correct horse battery',
    });
  });

  it('shows only the page that turns TOTP on while the account requires it', async () => {
    const server = new FakeServer({
      'GET /session': ok(session({ two_factor: { enabled: false, required: true } })),
      'GET /account/two-factor': ok({ ...OFF, account_requires: true }),
    });
    renderApp('/keys', server);
    expect(
      await screen.findByRole('heading', { name: 'Turn on two-factor sign-in', level: 1 }),
    ).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'API keys' })).not.toBeInTheDocument();
    expect(server.callsTo('GET', '/keys')).toHaveLength(0);
  });
});
