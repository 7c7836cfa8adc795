/**
 * Cross-site request forgery: a request that changes state is refused (403 csrf_rejected) without
 * the session's token, with a wrong one, from another origin, from a cross-site fetch, and as an
 * HTML form post; reads need no token; v1 is untouched by any of it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness;
let browser: Browser;
beforeEach(async () => {
  h = await createDashboardHarness();
  ({ browser } = await h.signedIn());
}, SLOW.timeout);
afterEach(async () => {
  await h.close();
});

const NEW_KEY = { name: 'ci', kind: 'test', scopes: ['verify'] };

async function activeKeys(): Promise<number> {
  return (await browser.get(`${API}/keys`)).json<{ active: number }>().active;
}

describe('dashboard CSRF protection', SLOW, () => {
  it('accepts a state change that carries the session’s token from the service’s own origin', async () => {
    const before = await activeKeys();
    const res = await browser.post('keys', NEW_KEY);
    expect(res.statusCode).toBe(201);
    expect(await activeKeys()).toBe(before + 1);
  });

  it('refuses a state change without the token', async () => {
    const before = await activeKeys();
    const res = await browser.request('POST', `${API}/keys`, { body: NEW_KEY, noCsrf: true });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
    expect(await activeKeys()).toBe(before);
  });

  it('refuses a state change with another session’s token', async () => {
    await h.addMember('bob@example.org');
    const other = h.browser();
    const otherSession = await other.signIn('bob@example.org');
    const res = await browser.request('POST', `${API}/keys`, {
      body: NEW_KEY,
      noCsrf: true,
      headers: { 'x-csrf-token': otherSession.csrf_token },
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
  });

  it('refuses a request from another origin, even with the token', async () => {
    const res = await browser.request('POST', `${API}/keys`, {
      body: NEW_KEY,
      headers: { origin: 'https://evil.example' },
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
  });

  it('refuses a cross-site fetch (Sec-Fetch-Site: cross-site) without an Origin', async () => {
    const res = await h.inject({
      method: 'POST',
      url: `${API}/keys`,
      headers: {
        cookie: `mv_session=${browser.cookie!}`,
        'x-csrf-token': browser.csrf!,
        'sec-fetch-site': 'cross-site',
        'content-type': 'application/json',
      },
      payload: JSON.stringify(NEW_KEY),
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
  });

  it('refuses a cross-site HTML form post (application/x-www-form-urlencoded)', async () => {
    const before = await activeKeys();
    // What a hidden form on another site sends: the cookie (a top-level POST), no token header.
    const res = await h.inject({
      method: 'POST',
      url: `${API}/keys`,
      headers: {
        cookie: `mv_session=${browser.cookie!}`,
        origin: 'https://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'name=pwned&kind=live&scopes=verify',
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
    expect(await activeKeys()).toBe(before);
  });

  it('refuses a form post even from the service’s own origin and with the token', async () => {
    const res = await browser.request('POST', `${API}/keys`, {
      raw: { type: 'text/plain', payload: JSON.stringify(NEW_KEY) },
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
  });

  it('refuses a sign-in posted from another origin', async () => {
    await h.addMember('bob@example.org');
    const res = await h.browser().request('POST', `${API}/session`, {
      body: { email: 'bob@example.org', password: 'correct horse battery' },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
  });

  it('needs no token to read', async () => {
    const res = await browser.request('GET', `${API}/keys`, {
      noCsrf: true,
      headers: { origin: 'https://evil.example' },
    });
    expect(res.statusCode).toBe(200);
  });

  it('leaves v1 alone: a key in Authorization needs no token and no Origin', async () => {
    const res = await h.v1('POST', '/v1/verify', h.testKey, { email: 'anna@valid.example.com' });
    expect(res.statusCode).toBe(200);
  });
});
