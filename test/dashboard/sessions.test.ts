/**
 * The sessions page's endpoints with real cookies: a member lists their own signed-in sessions
 * (browser and device from the User-Agent, client address, this one marked) and ends one, which
 * signs that browser out; another member's session cannot be ended (nor seen); CSRF is required.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionList } from '../../src/dashboard/contract.js';
import {
  API,
  PASSWORD,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

const SLOW = { timeout: 60_000 };
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function signInAs(email: string, userAgent: string): Promise<Browser> {
  const b = h!.browser();
  const res = await b.request('POST', 'session', {
    body: { email, password: PASSWORD },
    headers: { 'user-agent': userAgent },
  });
  expect(res.statusCode).toBe(200);
  b.csrf = res.json<{ csrf_token: string }>().csrf_token;
  return b;
}

describe('dashboard sessions', SLOW, () => {
  it("lists the member's own sessions with device, browser and client address, this one marked", async () => {
    h = await createDashboardHarness();
    await h.addMember('owner@example.org', { role: 'owner' });
    await h.addMember('other@example.org');
    const laptop = await signInAs('owner@example.org', FIREFOX_LINUX);
    h.manualClock.advance(1000);
    await signInAs('owner@example.org', SAFARI_IPHONE);
    await signInAs('other@example.org', FIREFOX_LINUX);
    const res = await laptop.get(`${API}/sessions`);
    expect(res.statusCode).toBe(200);
    const { sessions } = res.json<SessionList>();
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).toMatchObject({
      browser: 'Safari 17',
      os: 'iOS 17.1',
      device: 'mobile',
      client_ip: '127.0.0.1',
      current: false,
    });
    expect(sessions[1]).toMatchObject({
      browser: 'Firefox 120',
      os: 'Linux',
      device: 'desktop',
      current: true,
    });
  });

  it('ends another of its sessions: that browser is signed out, this one stays', async () => {
    h = await createDashboardHarness();
    await h.addMember('owner@example.org', { role: 'owner' });
    const laptop = await signInAs('owner@example.org', FIREFOX_LINUX);
    const phone = await signInAs('owner@example.org', SAFARI_IPHONE);
    const other = (await laptop.get(`${API}/sessions`)).json<SessionList>().sessions.find((s) => !s.current)!;
    expect((await laptop.request('DELETE', `sessions/${other.id}`, { noCsrf: true })).statusCode).toBe(403);
    expect((await phone.get(`${API}/session`)).statusCode).toBe(200);
    expect((await laptop.request('DELETE', `sessions/${other.id}`)).statusCode).toBe(204);
    const after = await phone.get(`${API}/session`);
    expect(after.statusCode).toBe(401);
    expect(errorCode(after)).toBe('unauthenticated');
    expect((await laptop.get(`${API}/session`)).statusCode).toBe(200);
    expect((await laptop.get(`${API}/sessions`)).json<SessionList>().sessions).toHaveLength(1);
  });

  it("cannot end another member's session: 404, and it goes on", async () => {
    h = await createDashboardHarness();
    await h.addMember('owner@example.org', { role: 'owner' });
    await h.addMember('other@example.org');
    const owner = await signInAs('owner@example.org', FIREFOX_LINUX);
    const other = await signInAs('other@example.org', SAFARI_IPHONE);
    const theirs = (await other.get(`${API}/sessions`)).json<SessionList>().sessions[0]!;
    const res = await owner.request('DELETE', `sessions/${theirs.id}`);
    expect(res.statusCode).toBe(404);
    expect(errorCode(res)).toBe('not_found');
    expect((await other.get(`${API}/session`)).statusCode).toBe(200);
  });
});
