/**
 * A person changes their sign-in address (docs/dashboard.md, "Changing the sign-in address"):
 * the password is asked; without a relay the address changes at once, with one the new address
 * confirms by a one-time link; an address that is another person's is refused. Any member may:
 * the address is the person's own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EmailChangeResult, SessionView } from '../../src/dashboard/contract.js';
import { startMailSink, type MailSink } from '../kit/mail-sink.js';
import { waitFor } from '../kit/wait-for.js';
import { createDashboardHarness, errorCode, PASSWORD, type DashboardHarness } from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 90_000 };

let h: DashboardHarness | undefined;
let sink: MailSink | undefined;
afterEach(async () => {
  await h?.close();
  await sink?.close();
  h = undefined;
  sink = undefined;
});

describe('changing the sign-in address', SLOW, () => {
  it('asks the password, and without a relay changes the address at once: the new one signs in', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const wrong = await browser.post('account/email', {
      password: 'not my password',
      email: 'new@example.org',
    });
    expect(wrong.statusCode).toBe(401);
    expect(errorCode(wrong)).toBe('invalid_credentials');

    const res = await browser.post('account/email', { password: PASSWORD, email: ' New@Example.org ' });
    expect(res.statusCode).toBe(200);
    expect(res.json<EmailChangeResult>()).toEqual({ status: 'changed', email: 'new@example.org' });
    expect((await browser.get('session')).json<SessionView>().person.email).toBe('new@example.org');

    const again = h.browser();
    await again.signIn('new@example.org');
    const old = await h.browser().post('session', { email: 'owner@example.org', password: PASSWORD });
    expect(old.statusCode).toBe(401);
  });

  it("refuses another person's address, and one's own", async () => {
    h = await createDashboardHarness();
    await h.addMember('ann@example.org');
    const { browser } = await h.signedIn();
    const taken = await browser.post('account/email', { password: PASSWORD, email: 'ann@example.org' });
    expect(taken.statusCode).toBe(409);
    expect(errorCode(taken)).toBe('member_exists');
    const same = await browser.post('account/email', { password: PASSWORD, email: 'owner@example.org' });
    expect(same.statusCode).toBe(422);
  });

  it('lets a member who is not the owner change their own address', async () => {
    h = await createDashboardHarness();
    await h.addMember('ann@example.org');
    const ann = h.browser();
    await ann.signIn('ann@example.org');
    const res = await ann.post('account/email', { password: PASSWORD, email: 'ann@elsewhere.example' });
    expect(res.json<EmailChangeResult>()).toMatchObject({ status: 'changed' });
  });

  it('with a relay, changes nothing until the link e-mailed to the new address is opened, once', async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } });
    const { browser } = await h.signedIn();
    const res = await browser.post('account/email', { password: PASSWORD, email: 'new@example.org' });
    expect(res.statusCode).toBe(200);
    expect(res.json<EmailChangeResult>()).toMatchObject({
      status: 'confirm_by_link',
      email: 'new@example.org',
      emailed: true,
    });
    await waitFor(
      'the confirmation e-mail',
      async () => (sink!.messages.length === 1 ? true : undefined),
      10_000,
    );
    const mail = sink.messages[0]!;
    expect(mail.to).toEqual(['new@example.org']);
    const token = /\/confirm-email#([A-Za-z0-9_-]{43})/.exec(mail.text ?? '')![1]!;
    // Not yet: the old address still signs in.
    expect((await browser.get('session')).json<SessionView>().person.email).toBe('owner@example.org');

    const opened = await h.browser().post('email-changes/accept', { token });
    expect(opened.statusCode).toBe(200);
    expect(opened.json<{ email: string }>().email).toBe('new@example.org');
    expect((await browser.get('session')).json<SessionView>().person.email).toBe('new@example.org');
    const twice = await h.browser().post('email-changes/accept', { token });
    expect(twice.statusCode).toBe(404);
    expect(errorCode(twice)).toBe('not_found');
  });
});
