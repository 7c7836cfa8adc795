import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, failure, ok } from '../test/fake-server';
import { result } from '../test/fixtures';
import { renderApp } from '../test/render';

const check = (name: string) => {
  const heading = within(screen.getByRole('list', { name: 'Checks' })).getByRole('heading', { name });
  return heading.closest('li') as HTMLElement;
};

describe('verify page', () => {
  it('explains the verdict and every check in words', async () => {
    const server = new FakeServer({ 'POST /verify': ok(result()) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'info@gmial.com');
    await user.click(screen.getByRole('button', { name: 'Verify' }));

    const found = await screen.findByRole('region', { name: 'Result for info@gmial.com' });
    expect(within(found).getByText('Risky')).toBeInTheDocument();
    expect(found).toHaveTextContent('Score 53 of 100');
    expect(found).toHaveTextContent('The domain accepts every address, so this mailbox cannot be confirmed.');
    expect(found).toHaveTextContent('Did you mean info@gmail.com?');

    expect(check('Syntax')).toHaveTextContent('Well-formed');
    expect(check('Syntax')).toHaveTextContent('Local part info, domain gmial.com.');
    expect(check('Mail servers (MX)')).toHaveTextContent('mx1.gmial.com (priority 10)');
    expect(check('Mail servers (MX)')).toHaveTextContent('mx2.gmial.com (priority 20)');
    expect(check('Mailbox (SMTP)')).toHaveTextContent('Accepted');
    expect(check('Mailbox (SMTP)')).toHaveTextContent('mx1.gmial.com answered 250 2.1.5 “Recipient OK”');
    expect(check('Mailbox (SMTP)')).toHaveTextContent('Encrypted with STARTTLS.');
    expect(check('Catch-all')).toHaveTextContent('The domain also accepted a made-up address');
    expect(check('Disposable')).toHaveTextContent('Not a disposable mail service.');
    expect(check('Role address')).toHaveTextContent('A role mailbox');
    expect(check('Free provider')).toHaveTextContent('A free mailbox provider');

    const [sent] = server.callsTo('POST', '/verify');
    expect(sent?.body).toEqual({ email: 'info@gmial.com' });
    expect(sent?.headers['x-csrf-token']).toBe('csrf-token-1');
  });

  it('verifies the suggested address when asked', async () => {
    const server = new FakeServer({ 'POST /verify': ok(result()) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'info@gmial.com');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await user.click(await screen.findByRole('button', { name: 'Verify info@gmail.com instead' }));
    expect(server.callsTo('POST', '/verify').map((call) => call.body)).toEqual([
      { email: 'info@gmial.com' },
      { email: 'info@gmail.com' },
    ]);
  });

  it('says what a refused mailbox and a missing domain mean', async () => {
    const rejected = result({
      email: 'gone@example.com',
      status: 'undeliverable',
      score: 5,
      reason: 'smtp_rejected',
      did_you_mean: null,
      checks: {
        ...result().checks,
        smtp: {
          passed: false,
          host: 'mx.example.com',
          code: 550,
          enhanced_code: '5.1.1',
          message: 'No such user',
          tls: false,
          duration_ms: 120,
        },
        catchAll: { passed: null, value: null },
      },
    });
    const server = new FakeServer({ 'POST /verify': ok(rejected) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'gone@example.com');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByRole('region', { name: 'Result for gone@example.com' });
    expect(screen.getByText('Undeliverable')).toBeInTheDocument();
    expect(check('Mailbox (SMTP)')).toHaveTextContent('Refused');
    expect(check('Mailbox (SMTP)')).toHaveTextContent('answered 550 5.1.1 “No such user”');
    expect(check('Mailbox (SMTP)')).toHaveTextContent('Not encrypted.');
    expect(check('Catch-all')).toHaveTextContent('Not tested');
    expect(screen.getByText('No typo suggestion.')).toBeInTheDocument();

    server.on(
      'POST /verify',
      ok(
        result({
          email: 'a@nowhere.example',
          status: 'undeliverable',
          score: 2,
          reason: 'domain_not_found',
          did_you_mean: null,
          checks: {
            ...result().checks,
            mx: { passed: false, records: [], implicit: false, error: 'NXDOMAIN', provider: null },
            smtp: {
              passed: null,
              host: null,
              code: null,
              enhanced_code: null,
              message: null,
              tls: false,
              duration_ms: null,
            },
          },
        }),
      ),
    );
    await user.clear(screen.getByLabelText('E-mail address'));
    await user.type(screen.getByLabelText('E-mail address'), 'a@nowhere.example');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByRole('region', { name: 'Result for a@nowhere.example' });
    expect(check('Mail servers (MX)')).toHaveTextContent('The domain does not exist (NXDOMAIN).');
    expect(check('Mailbox (SMTP)')).toHaveTextContent('No mail server was asked about the mailbox.');
  });

  it('names the disposable provider’s mail server when that raised the flag', async () => {
    const server = new FakeServer({
      'POST /verify': ok(
        result({
          status: 'risky',
          reason: 'disposable_domain',
          checks: {
            ...result().checks,
            disposable: { passed: false, value: true, signal: 'mx_host', mx_host: 'mx.throwaway.example' },
          },
        }),
      ),
    });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'info@gmial.com');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByRole('region', { name: /^Result for/ });
    expect(check('Disposable')).toHaveTextContent('mail goes to mx.throwaway.example, a disposable');
  });

  it('says why an address could not be verified, with the request id', async () => {
    const server = new FakeServer({
      'POST /verify': failure(422, 'invalid_email_format', 'The address is malformed.'),
    });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'nope@');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      /^Could not verify the address: The address is malformed\. \(request req_[0-9a-f]{32}\)$/,
    );
  });

  it('asks for the SMTP conversation when the box is ticked and shows it behind a disclosure', async () => {
    const transcript = [
      { dir: 'out' as const, text: '[connect mx1.gmial.com (192.0.2.1) port 25]', at_ms: 3 },
      { dir: 'in' as const, text: '220 mx1.gmial.com ESMTP', at_ms: 40 },
      { dir: 'out' as const, text: 'RCPT TO:<info@gmial.com>', at_ms: 80 },
    ];
    const server = new FakeServer({ 'POST /verify': ok(result({ transcript })) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'info@gmial.com');
    await user.click(screen.getByRole('checkbox', { name: 'Include the SMTP conversation' }));
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    expect(server.callsTo('POST', '/verify')[0]?.body).toEqual({
      email: 'info@gmial.com',
      include_transcript: true,
    });

    const found = await screen.findByRole('region', { name: /^Result for/ });
    const show = within(found).getByRole('button', { name: 'Show the SMTP conversation' });
    expect(show).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('list', { name: 'SMTP conversation' })).toBeNull();

    // Keyboard: focus the control and press Enter, then Space to close it again.
    show.focus();
    await user.keyboard('{Enter}');
    expect(show).toHaveAttribute('aria-expanded', 'true');
    const lines = within(screen.getByRole('list', { name: 'SMTP conversation' })).getAllByRole('listitem');
    expect(lines.map((li) => li.textContent)).toEqual([
      '+3 ms→sent: [connect mx1.gmial.com (192.0.2.1) port 25]',
      '+40 ms←received: 220 mx1.gmial.com ESMTP',
      '+80 ms→sent: RCPT TO:<info@gmial.com>',
    ]);
    await user.keyboard(' ');
    expect(show).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('list', { name: 'SMTP conversation' })).toBeNull();
  });

  it('offers no conversation when it was not asked for', async () => {
    const server = new FakeServer({ 'POST /verify': ok(result()) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'info@gmial.com');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    const found = await screen.findByRole('region', { name: /^Result for/ });
    expect(within(found).queryByRole('button', { name: 'Show the SMTP conversation' })).toBeNull();
  });

  it('names the provider that runs the mail, and none for an unknown one', async () => {
    const base = result();
    const google = result({
      email: 'anna@example.org',
      did_you_mean: null,
      checks: {
        ...base.checks,
        mx: {
          passed: true,
          records: [{ exchange: 'aspmx.l.google.com', priority: 1 }],
          implicit: false,
          error: null,
          provider: 'google',
        },
      },
    });
    const server = new FakeServer({ 'POST /verify': ok(google) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'anna@example.org');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByRole('region', { name: 'Result for anna@example.org' });
    expect(check('Mail servers (MX)')).toHaveTextContent('Run by Google (Gmail, Google Workspace).');
  });

  it('names no provider when the table knows none', async () => {
    const server = new FakeServer({ 'POST /verify': ok(result()) });
    const { user } = renderApp('/verify', server);
    await user.type(await screen.findByLabelText('E-mail address'), 'info@gmial.com');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByRole('region', { name: 'Result for info@gmial.com' });
    expect(check('Mail servers (MX)')).not.toHaveTextContent('Run by');
  });
});
