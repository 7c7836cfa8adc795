/**
 * Issue 16, small defects: signed-in JSON of the dashboard's API is never cached. `/session`
 * carries the CSRF token and creating a key answers its secret; a browser's back-forward cache or
 * a shared proxy must not keep either.
 */
import { afterEach, expect, it } from 'vitest';
import { createDashboardHarness, type DashboardHarness } from '../kit/dashboard-kit.js';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('answers every dashboard API request with Cache-Control: no-store, signed in or not', async () => {
  h = await createDashboardHarness();
  const { browser } = await h.signedIn();
  const session = await browser.get('session');
  expect(session.statusCode).toBe(200);
  expect(session.headers['cache-control']).toBe('no-store');
  const created = await browser.post('keys', { name: 'ci', kind: 'test', scopes: ['verify'] });
  expect(created.statusCode).toBe(201);
  expect(created.headers['cache-control']).toBe('no-store');
  const refused = await h.browser().get('session');
  expect(refused.statusCode).toBe(401);
  expect(refused.headers['cache-control']).toBe('no-store');
}, 60_000);
