/**
 * Members and settings from the dashboard: inviting (the link shown, and e-mailed through the
 * relay), removing a member (which ends its sessions), the owner staying, other accounts' members
 * answering 404; the notification address and the webhook signing secret.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Invitation, MemberList, Settings, WebhookSecret } from '../../src/dashboard/contract.js';
import { webhookSecretFor } from '../../src/services/webhooks/secret.js';
import { API, createDashboardHarness, errorCode, type DashboardHarness } from '../kit/dashboard-kit.js';
import { startMailSink, type MailSink } from '../kit/mail-sink.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness | undefined;
let sink: MailSink | undefined;
afterEach(async () => {
  await h?.close();
  await sink?.close();
  h = undefined;
  sink = undefined;
});

describe('dashboard members', SLOW, () => {
  it('invites an address: the one-time link is shown, and the invited person gets in with it', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const res = await browser.post('members', { email: 'New.Person@Example.org' });
    expect(res.statusCode).toBe(201);
    const invitation = res.json<Invitation>();
    expect(invitation.member).toMatchObject({
      email: 'new.person@example.org',
      role: 'member',
      joined_at: null,
    });
    expect(invitation.emailed).toBe(false);
    expect(invitation.link).toMatch(
      new RegExp(`^${h.runtime.ctx.config.publicBaseUrl}/accept-invite#[A-Za-z0-9_-]{43}$`),
    );
    const token = invitation.link!.split('#')[1]!;
    const invited = h.browser();
    expect(
      (await invited.post('invitations/accept', { token, password: 'a good password' })).statusCode,
    ).toBe(200);
    const members = (await browser.get(`${API}/members`)).json<MemberList>().members;
    expect(members.map((m) => [m.email, m.role, m.joined_at !== null])).toEqual([
      ['owner@example.org', 'owner', true],
      ['new.person@example.org', 'member', true],
    ]);
  });

  it('e-mails the invitation link through the relay when one is configured', async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({
      flags: { smtpRelayUrl: sink.url, publicBaseUrl: 'https://verify.example.net' },
    });
    const { browser } = await h.signedIn();
    const invitation = (await browser.post('members', { email: 'new@example.org' })).json<Invitation>();
    expect(invitation.emailed).toBe(true);
    expect(sink.messages).toHaveLength(1);
    expect(sink.messages[0]!.to).toEqual(['new@example.org']);
    expect(sink.messages[0]!.text).toContain(invitation.link!);
    expect(invitation.link!.startsWith('https://verify.example.net/accept-invite#')).toBe(true);
  });

  it('e-mails a reset link when a forgotten password is asked for and a relay exists', async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } });
    await h.addMember('ann@example.org');
    expect((await h.browser().post('password-resets', { email: 'ann@example.org' })).statusCode).toBe(202);
    await expect.poll(() => sink!.messages.length).toBe(1);
    const link = /(http:\/\/\S+\/reset-password#[A-Za-z0-9_-]{43})/.exec(sink.messages[0]!.text)![1]!;
    const b = h.browser();
    expect(
      (await b.post('password-resets/accept', { token: link.split('#')[1], password: 'fresh password' }))
        .statusCode,
    ).toBe(200);
    expect((await b.get(`${API}/session`)).statusCode).toBe(200);
  });

  it('refuses to invite an address that already joined this account', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    await h.addMember('joined@example.org');
    for (const email of ['owner@example.org', 'Joined@Example.org']) {
      const res = await browser.post('members', { email });
      expect(res.statusCode).toBe(409);
      expect(errorCode(res)).toBe('member_exists');
    }
  });

  it('removes a member, whose open session ends at once; the person stays, in no account', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const bobId = await h.addMember('bob@example.org');
    const bob = h.browser();
    await bob.signIn('bob@example.org');
    expect((await bob.get(`${API}/overview`)).statusCode).toBe(200);
    expect((await browser.request('DELETE', `${API}/members/${bobId}`)).statusCode).toBe(204);
    const res = await bob.get(`${API}/overview`);
    expect(res.statusCode).toBe(401);
    expect(errorCode(res)).toBe('unauthenticated');
    // The person is not deleted: the right password is told they belong to no account, no more.
    const again = await h
      .browser()
      .post('session', { email: 'bob@example.org', password: 'correct horse battery' });
    expect(again.statusCode).toBe(403);
    expect(errorCode(again)).toBe('insufficient_permissions');
    expect(
      await h.runtime.ctx.db
        .selectFrom('people')
        .select('email')
        .where('email', '=', 'bob@example.org')
        .execute(),
    ).toHaveLength(1);
  });

  it('never removes the owner', async () => {
    h = await createDashboardHarness();
    const { browser, session } = await h.signedIn();
    const res = await browser.request('DELETE', `${API}/members/${session.member!.id}`);
    expect(res.statusCode).toBe(409);
    expect(errorCode(res)).toBe('owner_not_removable');
  });

  it('answers 404 for another account’s member, exactly as for an unknown id, and leaves it in', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const other = await h.createOtherAccount();
    const theirs = await h.addMember('theirs@example.org', { accountId: other.accountId });
    const res = await browser.request('DELETE', `${API}/members/${theirs}`);
    const unknown = await browser.request('DELETE', `${API}/members/mem_unknown0000000`);
    expect([res.statusCode, unknown.statusCode]).toEqual([404, 404]);
    expect(res.json<{ message: string }>().message.replace(theirs, 'ID')).toBe(
      unknown.json<{ message: string }>().message.replace('mem_unknown0000000', 'ID'),
    );
    const b = h.browser();
    expect(
      (await b.post('session', { email: 'theirs@example.org', password: 'correct horse battery' }))
        .statusCode,
    ).toBe(200);
  });
});

describe('dashboard settings', SLOW, () => {
  it('shows the account id, the notification address and a hint of the webhook secret, never the secret', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const res = await browser.get(`${API}/settings`);
    const secret = await webhookSecretFor(h.runtime.ctx.db, h.accountId);
    expect(res.json<Settings>()).toEqual({
      account_id: h.accountId,
      notification_email: 'owner@example.org',
      webhook_secret_hint: `…${secret.slice(-4)}`,
      relay_configured: false,
    });
    expect(res.body).not.toContain(secret);
  });

  it('changes the notification address, refusing one that is not an address', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const bad = await browser.request('PUT', `${API}/settings`, {
      body: { notification_email: 'no address here' },
    });
    expect(bad.statusCode).toBe(422);
    const ok = await browser.request('PUT', `${API}/settings`, {
      body: { notification_email: 'Billing@Example.org' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json<Settings>().notification_email).toBe('Billing@Example.org');
    expect(
      (
        await h.runtime.ctx.db
          .selectFrom('accounts')
          .select('email')
          .where('id', '=', h.accountId)
          .executeTakeFirstOrThrow()
      ).email,
    ).toBe('Billing@Example.org');
  });

  it('reveals the webhook secret on demand and rotates it', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const revealed = (await browser.post('settings/webhook-secret/reveal')).json<WebhookSecret>()
      .webhook_secret;
    expect(revealed).toBe(await webhookSecretFor(h.runtime.ctx.db, h.accountId));
    const rotated = (await browser.post('settings/webhook-secret/rotate')).json<WebhookSecret>()
      .webhook_secret;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(revealed);
    expect(await webhookSecretFor(h.runtime.ctx.db, h.accountId)).toBe(rotated);
  });
});
