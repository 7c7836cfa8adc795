/**
 * The sign-in page's `next` in Chromium against a real `serve` (issue 26, 7): a `next` that the
 * URL parser turns into another origin (`/<tab>/evil.example/` is `//evil.example/` once the tab
 * is dropped) used to pass the page's check, make history.replaceState throw and leave the page
 * blank, also after a reload. Now it leads to the overview, and a path of the site still leads to
 * that path.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PASSWORD, addMember, signIn, skipE2e } from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

const EMAIL = 'nia@example.org';
const HOSTILE = ['/%09/evil.example/', '/%0A/evil.example/', '/%0D%0A/evil.example/', '/%5C/evil.example/'];

/** The page's uncaught errors, collected from the start. */
function errorsOf(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return errors;
}

describe.skipIf(skipE2e)('dashboard end to end: where sign-in goes next', { timeout: 120_000 }, () => {
  const e2e = useE2eSuite((d) => addMember(d, d.accountId, EMAIL));

  it('a signed-in browser sent to a hostile next sees the overview, also after a reload', async () => {
    const context = await e2e.context();
    await signIn(context, EMAIL);
    for (const next of HOSTILE) {
      const page = await context.newPage();
      const errors = errorsOf(page);
      await page.goto(`/sign-in?next=${next}`);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(new URL(page.url()).origin, next).toBe(e2e.dashboard.url);
      expect(new URL(page.url()).pathname, next).toBe('/');
      await page.reload();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(errors, next).toEqual([]);
      await page.close();
    }
  });

  it('signing in from the page with a hostile next lands on the overview; a path of the site is kept', async () => {
    const page = await (await e2e.context()).newPage();
    const errors = errorsOf(page);
    await page.goto(`/sign-in?next=${HOSTILE[0]}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');

    await page.goto('/sign-in?next=%2Fkeys');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/keys');
    // A path that only looks like a host stays on this site.
    await page.goto('/sign-in?next=/.//evil.example/');
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    expect(new URL(page.url()).href).toBe(`${e2e.dashboard.url}/evil.example/`);
    expect(errors).toEqual([]);
  });
});
