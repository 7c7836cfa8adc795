/**
 * Getting in and staying safe, in Chromium against a real `serve`: the owner's invitation link,
 * signing in and out, the sign-in page for a visitor without a session, cross-site requests
 * refused, and another account's key and job answering 404 as unknown ones do.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyList, SessionView } from '../../src/dashboard/contract.js';
import { PASSWORD, TEST_DOMAIN, addMember, pageFetch, signIn, skipE2e } from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

describe.skipIf(skipE2e)('dashboard end to end: sessions and their boundaries', { timeout: 60_000 }, () => {
  const e2e = useE2eSuite();
  const context = () => e2e.context();

  // First: every other test signs in with the password this one sets.
  it('the owner opens the invitation link serve printed, sets a password and is signed in', async () => {
    expect(e2e.dashboard.ownerInvitationLink).toMatch(/\/accept-invite#[\w-]{20,}$/);
    const page = await (await context()).newPage();
    await page.goto(e2e.dashboard.ownerInvitation);
    await page.getByRole('heading', { name: 'Join mailverdict' }).waitFor();
    await page.getByText(e2e.dashboard.ownerEmail, { exact: true }).waitFor();
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();

    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    // Signed in as the owner: the frame names the member.
    await page.getByText(e2e.dashboard.ownerEmail, { exact: true }).first().waitFor();

    // The link worked once: opened again, it says so.
    const again = await (await context()).newPage();
    await again.goto(e2e.dashboard.ownerInvitation);
    await again.getByText('This invitation is not valid any more').waitFor();
  }, 60_000);

  it('a visitor without a session is sent to the sign-in page, and back to the page asked for after signing in', async () => {
    const page = await (await context()).newPage();
    await page.goto('/keys');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const url = new URL(page.url());
    expect(url.pathname).toBe('/sign-in');
    expect(url.searchParams.get('next')).toBe('/keys');

    await page.getByLabel('E-mail').fill(e2e.dashboard.ownerEmail);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(/Could not sign in/)
      .waitFor();

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/keys');
  }, 60_000);

  it('signing out ends the session: the pages go back to sign-in and its cookie opens nothing', async () => {
    const ctx = await context();
    await signIn(ctx, e2e.dashboard.ownerEmail);
    const page = await ctx.newPage();
    await page.goto('/settings');
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    const cookie = (await ctx.cookies()).find((c) => c.name === 'mv_session');
    expect(cookie).toMatchObject({ name: 'mv_session', httpOnly: true, sameSite: 'Lax' });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');

    // The old cookie, replayed, is refused: the session ended on the server, not only in the page.
    const replay = await fetch(`${e2e.dashboard.url}/dashboard/api/session`, {
      headers: { cookie: `${cookie!.name}=${cookie!.value}` },
    });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { error: string }).error).toBe('unauthenticated');
    await page.goto('/');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  describe('a cross-site request is refused', () => {
    let other: Server;
    let otherOrigin: string;
    beforeAll(async () => {
      // Another origin on the same machine (another port: the same site, so the browser even
      // sends the SameSite=Lax cookie): a page that posts a form to the dashboard at once.
      other = createServer((request, response) => {
        const target = new URL(request.url ?? '/', 'http://x').searchParams.get('target') ?? '';
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(
          `<!doctype html><title>A prize for you</title>
          <form id="f" method="post" action="${target}" enctype="text/plain">
            <input name='{"name":"planted","kind":"live","scopes":["verify"],"x":"' value='"}'>
          </form>
          <form id="g" method="post" action="${target}">
            <input name="name" value="planted-urlencoded">
          </form>
          <script>document.getElementById(location.hash === '#g' ? 'g' : 'f').submit()</script>`,
        );
      });
      other.listen(0, '127.0.0.1');
      await new Promise((resolve) => other.once('listening', resolve));
      otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => other.close(() => resolve())));

    it('a form another site posts to the dashboard while the member is signed in creates nothing', async () => {
      const ctx = await context();
      const session = await signIn(ctx, e2e.dashboard.ownerEmail);
      const page = await ctx.newPage();
      const keysBefore = await pageFetch(await openApp(page), '/dashboard/api/keys');
      const before = (JSON.parse(keysBefore.body) as KeyList).keys.length;

      for (const form of ['f', 'g']) {
        const answer = page.waitForResponse((r) => r.url().endsWith('/dashboard/api/keys'));
        await page.goto(
          `${otherOrigin}/?target=${encodeURIComponent(`${e2e.dashboard.url}/dashboard/api/keys`)}#${form}`,
        );
        const response = await answer;
        // The browser did send the cookie (same site, another origin): the server's guard refused it.
        expect((await response.request().allHeaders()).cookie).toContain('mv_session=');
        expect(response.status()).toBe(403);
        expect(((await response.json()) as { error: string }).error).toBe('csrf_rejected');
      }

      await openApp(page);
      const after = JSON.parse((await pageFetch(page, '/dashboard/api/keys')).body) as KeyList;
      expect(after.keys.length).toBe(before);
      expect(after.keys.map((k) => k.name)).not.toContain('planted');
      expect(session.csrf_token).not.toBe('');
    });

    it("the dashboard's own page is refused a change without the session's CSRF token", async () => {
      const ctx = await context();
      const session = await signIn(ctx, e2e.dashboard.ownerEmail);
      const page = await openApp(await ctx.newPage());
      const body = { name: 'no token', kind: 'test', scopes: ['verify'] };
      const without = await pageFetch(page, '/dashboard/api/keys', { method: 'POST', body });
      expect(without.status).toBe(403);
      expect(JSON.parse(without.body)).toMatchObject({ error: 'csrf_rejected' });
      const wrong = await pageFetch(page, '/dashboard/api/keys', {
        method: 'POST',
        body,
        csrf: 'x'.repeat(43),
      });
      expect(wrong.status).toBe(403);

      // The same request with the token goes through: the refusals were about the token alone.
      const withToken = await pageFetch(page, '/dashboard/api/keys', {
        method: 'POST',
        body,
        csrf: session.csrf_token,
      });
      expect(withToken.status).toBe(201);
    });
  });

  it("a member of another account gets 404 for this account's key and job, as for unknown ones", async () => {
    // Account A (the bootstrap account): a key and a job of its own.
    const owner = await context();
    const ownerSession = await signIn(owner, e2e.dashboard.ownerEmail);
    const ownerPage = await openApp(await owner.newPage());
    const keyId = (JSON.parse((await pageFetch(ownerPage, '/dashboard/api/keys')).body) as KeyList).keys[0]!
      .id;
    const upload = await owner.request.post(
      '/dashboard/api/lists?name=a-list&email_column=0&header=false&mode=test',
      {
        headers: { 'content-type': 'text/csv', 'x-csrf-token': ownerSession.csrf_token },
        data: `ann@valid.${TEST_DOMAIN}\nbob@invalid.${TEST_DOMAIN}\n`,
      },
    );
    expect(upload.status()).toBe(202);
    const jobId = ((await upload.json()) as { job_id: string }).job_id;

    // Account B, made by the operator, and a member of it.
    const b = await e2e.dashboard.cli<{ id: string }>('accounts', 'create', '--email', 'ops@b.example.org');
    await addMember(e2e.dashboard, b.id, 'bea@b.example.org');
    const intruder = await context();
    const session: SessionView = await signIn(intruder, 'bea@b.example.org');
    expect(session.account!.id).toBe(b.id);
    const page = await openApp(await intruder.newPage());

    const asked = async (path: string, method = 'GET') => {
      const res = await pageFetch(page, path, method === 'GET' ? {} : { method, csrf: session.csrf_token });
      const envelope = JSON.parse(res.body) as { error: string; message: string };
      return { status: res.status, error: { code: envelope.error, message: envelope.message } };
    };
    const unknownKey = await asked('/dashboard/api/keys/key_doesnotexist0000000000/revoke', 'POST');
    const theirKey = await asked(`/dashboard/api/keys/${keyId}/revoke`, 'POST');
    expect(theirKey.status).toBe(404);
    expect(theirKey.error.code).toBe('not_found');
    expect(unknownKey.status).toBe(404);
    expect(theirKey.error.message.replace(keyId, 'ID')).toBe(
      unknownKey.error.message.replace('key_doesnotexist0000000000', 'ID'),
    );
    for (const path of [`/dashboard/api/jobs/${jobId}`, `/dashboard/api/jobs/${jobId}/download`]) {
      const theirs = await asked(path);
      expect(theirs).toMatchObject({ status: 404, error: { code: 'not_found' } });
    }
    expect(await asked(`/dashboard/api/jobs/${jobId}/cancel`, 'POST')).toMatchObject({ status: 404 });

    // And the page says so in words.
    await page.goto(`/lists/${jobId}`);
    await page.getByRole('heading', { name: 'List not found' }).waitFor();

    // Nothing was touched: the key is still active for its own account.
    const keys = JSON.parse((await pageFetch(ownerPage, '/dashboard/api/keys')).body) as KeyList;
    expect(keys.keys.find((k) => k.id === keyId)?.status).toBe('active');
  });
});

/** Opens the app's overview so that page-side fetches run on the dashboard's origin. */
async function openApp(page: Page): Promise<Page> {
  await page.goto('/');
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}
