/**
 * The security log through the dashboard with real cookies: what members do is recorded with who,
 * when, where from and what; the owner reads it filtered and paged, and downloads it as CSV; a
 * member is refused; failed sign-ins are an account's only for its members' addresses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditPage, CreatedKey, Invitation } from '../../src/dashboard/contract.js';
import {
  API,
  PASSWORD,
  createDashboardHarness,
  errorCode,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the security log', SLOW, () => {
  it('records sign-ins, keys, invitations, removals and the webhook secret, and the owner reads them newest first', async () => {
    h = await createDashboardHarness();
    const { browser, session } = await h.signedIn();
    // Entries made in one millisecond have no order between them: the clock moves between steps.
    const step = async <T>(action: () => Promise<T>): Promise<T> => {
      h!.manualClock.advance(1000);
      return action();
    };
    const key = (
      await step(() => browser.post('keys', { name: 'ci', kind: 'test', scopes: ['verify'] }))
    ).json<CreatedKey>();
    await step(() => browser.post(`keys/${key.key.id}/rotate`));
    await step(() => browser.post(`keys/${key.key.id}/revoke`));
    const invited = (
      await step(() => browser.post('members', { email: 'pending@example.org' }))
    ).json<Invitation>();
    await step(() => browser.request('DELETE', `members/${invited.member.id}`));
    await step(() => browser.post('settings/webhook-secret/reveal'));
    await step(() => browser.post('settings/webhook-secret/rotate'));

    const res = await browser.get(`${API}/audit`);
    expect(res.statusCode).toBe(200);
    const page = res.json<AuditPage>();
    const types = page.entries.map((e) => e.type);
    expect(types.slice(0, -2)).toEqual([
      'webhook_secret_rotated',
      'webhook_secret_revealed',
      'invitation_revoked',
      'invitation_created',
      'key_revoked',
      'key_rotated',
      'key_created',
    ]);
    // The harness's owner accepted their invitation and signed in within one millisecond.
    expect(types.slice(-2).sort()).toEqual(['invitation_accepted', 'sign_in']);
    const signIn = page.entries.find((e) => e.type === 'sign_in')!;
    expect(signIn.actor).toEqual({
      kind: 'member',
      member_id: session.member!.id,
      email: 'owner@example.org',
    });
    expect(signIn.client_ip).toBe('127.0.0.1');
    expect(page.entries.find((e) => e.type === 'key_created')!.details).toEqual({
      key_id: key.key.id,
      kind: 'test',
    });
    // No secret of any kind is in the log.
    expect(res.body).not.toContain(key.secret);
    expect(res.body).not.toContain(PASSWORD);
  });

  it('filters by type and member and pages by cursor', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    for (let i = 0; i < 5; i++)
      await browser.post('keys', { name: `k${i}`, kind: 'test', scopes: ['verify'] });
    const first = (await browser.get(`${API}/audit?type=key_created&limit=2`)).json<AuditPage>();
    expect(first.entries.map((e) => e.details.key_id)).toHaveLength(2);
    const ids = first.entries.map((e) => e.id);
    let before = first.next_before;
    while (before !== null) {
      const next = (
        await browser.get(`${API}/audit?type=key_created&limit=2&before=${encodeURIComponent(before)}`)
      ).json<AuditPage>();
      ids.push(...next.entries.map((e) => e.id));
      before = next.next_before;
    }
    expect(new Set(ids).size).toBe(5);
    const none = (await browser.get(`${API}/audit?member=mem_nobody`)).json<AuditPage>();
    expect(none.entries).toEqual([]);
    expect(errorCode(await browser.get(`${API}/audit?type=nonsense`))).toBe('invalid_request');
  });

  it('refuses a member who is not the owner, as JSON and as CSV', async () => {
    h = await createDashboardHarness();
    await h.signedIn();
    await h.addMember('member@example.org');
    const member = h.browser();
    await member.signIn('member@example.org');
    for (const path of [`${API}/audit`, `${API}/audit.csv`]) {
      const res = await member.get(path);
      expect(res.statusCode).toBe(403);
      expect(errorCode(res)).toBe('insufficient_permissions');
    }
  });

  it('downloads the log as CSV with formula-like cells neutralised', async () => {
    h = await createDashboardHarness();
    await h.addMember('owner@example.org', { role: 'owner' });
    const browser = h.browser();
    const res = await browser.request('POST', 'session', {
      body: { email: 'owner@example.org', password: PASSWORD },
      headers: { 'user-agent': '=cmd|calc' },
    });
    browser.csrf = res.json<{ csrf_token: string }>().csrf_token;
    const csv = await browser.get(`${API}/audit.csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="security-log-/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('at,type,actor,member_id,email,client_ip,user_agent,details');
    // The owner's invitation_accepted (written by the harness) and the sign-in share a millisecond.
    const signIn = lines.slice(1).filter((line) => line.includes(',sign_in,member,'));
    expect(signIn).toHaveLength(1);
    expect(signIn[0]).toContain(",'=cmd|calc,");
  });

  it("records a failed sign-in for a member's address only, and a password change", async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const stranger = h.browser();
    const wrong = await stranger.request('POST', 'session', {
      body: { email: 'owner@example.org', password: 'not the password' },
      headers: { 'user-agent': FIREFOX },
    });
    expect(wrong.statusCode).toBe(401);
    expect((await stranger.post('session', { email: 'nobody@example.org', password: 'x' })).statusCode).toBe(
      401,
    );
    h.manualClock.advance(1000);
    expect(
      (
        await browser.post('account/password', {
          current_password: PASSWORD,
          new_password: 'another strong passphrase 42',
        })
      ).statusCode,
    ).toBe(204);
    const page = (await browser.get(`${API}/audit`)).json<AuditPage>();
    expect(page.entries[0]!.type).toBe('password_changed');
    const failed = page.entries.filter((e) => e.type === 'sign_in_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.user_agent).toBe(FIREFOX);
    expect(JSON.stringify(page)).not.toContain('nobody@example.org');
    expect(JSON.stringify(page)).not.toContain('not the password');
  });
});
