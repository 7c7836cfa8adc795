/**
 * Issue 16, small defects: what a member types and the service shows again (a key's name, an
 * invited address, the notification address, a list's name) refuses control characters (ESC,
 * BEL, CR, NUL, DEL), which `members list` and `accounts show` would print raw into the
 * operator's terminal.
 */
import { afterEach, expect, it } from 'vitest';
import { API, createDashboardHarness, errorCode, type DashboardHarness } from '../kit/dashboard-kit.js';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CONTROL = ['\u001b[31m', '\u0007', '\r\n', '\u0000', '\u007f'];

it('refuses control characters in key names, invitations, the notification address and list names', async () => {
  h = await createDashboardHarness();
  const { browser } = await h.signedIn();
  for (const c of CONTROL) {
    const key = await browser.post('keys', { name: `app${c}`, kind: 'test', scopes: ['verify'] });
    expect(key.statusCode, JSON.stringify(c)).toBe(422);
    expect(errorCode(key)).toBe('invalid_request');
    const invite = await browser.post('members', { email: `new${c}@example.org` });
    expect(invite.statusCode, JSON.stringify(c)).toBe(422);
    const settings = await browser.request('PUT', `${API}/settings`, {
      body: { notification_email: `ops${c}@example.org` },
    });
    expect(settings.statusCode, JSON.stringify(c)).toBe(422);
    const q = new URLSearchParams({ name: `list${c}.csv`, email_column: '0', header: 'false', mode: 'test' });
    const list = await browser.request('POST', `${API}/lists?${q.toString()}`, {
      raw: { type: 'text/csv', payload: 'a@valid.example.com\n' },
    });
    expect(list.statusCode, JSON.stringify(c)).toBe(422);
  }
  // Ordinary text, accents and all, still goes through.
  const ok = await browser.post('keys', { name: 'Zürich shop – signup', kind: 'test', scopes: ['verify'] });
  expect(ok.statusCode).toBe(201);
}, 60_000);
