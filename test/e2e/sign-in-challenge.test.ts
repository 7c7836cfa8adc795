/**
 * The proof of work after repeated failed sign-ins, in Chromium against a real `serve` (issue 16,
 * defect 2): the sign-in page loads the ALTCHA widget only when the server answers 428
 * `challenge_required`, the widget solves the challenge by itself in its worker under the
 * dashboard's CSP, and the attempt goes again and signs in.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_CHALLENGE_AFTER } from '../../src/services/people/sessions.service.js';
import {
  PASSWORD,
  acceptInvitation,
  describeViolations,
  launchChromium,
  newContext,
  seriousViolations,
  skipE2e,
  startDashboard,
  type Dashboard,
} from '../kit/e2e.js';

/** Every Content-Security-Policy violation the page reports, kept on the window. */
async function recordCspViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    interface Violation {
      violatedDirective: string;
      blockedURI: string;
    }
    const scope = globalThis as unknown as {
      cspViolations: string[];
      document: { addEventListener(type: string, listener: (e: Violation) => void): void };
    };
    scope.cspViolations = [];
    scope.document.addEventListener('securitypolicyviolation', (e) =>
      scope.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
}

describe.skipIf(skipE2e)(
  'dashboard end to end: a proof of work after failed sign-ins',
  { timeout: 120_000 },
  () => {
    let dashboard: Dashboard;
    let browser: Browser;

    beforeAll(async () => {
      // Only the (address, client) failures are under test, not the per-second allowance.
      [dashboard, browser] = await Promise.all([
        startDashboard({ MAILVERDICT_SIGN_IN_RATE_LIMIT: '0' }),
        launchChromium(),
      ]);
      await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await dashboard?.stop();
    });

    it('after repeated wrong passwords the widget appears, solves, and the right password signs in', async () => {
      const context = await newContext(browser, dashboard);
      const page = await context.newPage();
      await recordCspViolations(page);
      const scripts: string[] = [];
      page.on('request', (r) => {
        if (r.resourceType() === 'script' || r.url().includes('/assets/')) scripts.push(r.url());
      });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));

      await page.goto('/sign-in');
      await page.getByLabel('E-mail').fill(dashboard.ownerEmail);
      for (let i = 0; i < SIGN_IN_CHALLENGE_AFTER; i++) {
        await page.getByLabel('Password').fill(`wrong guess ${i}`);
        const answer = page.waitForResponse((r) => r.url().endsWith('/dashboard/api/session'));
        await page.getByRole('button', { name: 'Sign in' }).click();
        expect((await answer).status()).toBe(401);
        await page
          .getByRole('alert')
          .getByText(/Could not sign in/)
          .waitFor();
      }
      // No widget, and not even its code, before the server asks.
      expect(await page.locator('altcha-widget').count()).toBe(0);
      expect(scripts.filter((url) => /proof-of-work|sha-/.test(url))).toEqual([]);

      await page.getByLabel('Password').fill(PASSWORD);
      // What the page's status regions said, recorded as it happens: the "solving" notice lasts
      // only as long as the puzzle, which a fast machine solves before a locator could look.
      await page.evaluate(`(() => {
        const seen = [];
        globalThis.statusSeen = seen;
        new MutationObserver(() => {
          for (const el of document.querySelectorAll('[role="status"]')) seen.push(el.textContent ?? '');
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      })()`);
      const refused = page.waitForResponse((r) => r.url().endsWith('/dashboard/api/session'));
      const solvedAndSent = page.waitForRequest(
        (r) => r.url().endsWith('/dashboard/api/session') && (r.postData() ?? '').includes('"altcha"'),
        { timeout: 60_000 },
      );
      await page.getByRole('button', { name: 'Sign in' }).click();
      const first = await refused;
      expect(first.status()).toBe(428);
      expect(((await first.json()) as { error: string }).error).toBe('challenge_required');
      const askedAt = Date.now();
      await page.locator('altcha-widget').waitFor();

      const resent = await solvedAndSent;
      const sent = JSON.parse(resent.postData() ?? '{}') as { altcha: string };
      const { solution } = JSON.parse(Buffer.from(sent.altcha, 'base64').toString()) as {
        solution: { counter: number; time?: number };
      };
      console.log(
        `proof of work: counter ${solution.counter} found in ${solution.time} ms by the widget; sent ${Date.now() - askedAt} ms after the 428`,
      );
      expect((await resent.response())?.status()).toBe(200);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      const said = await page.evaluate<string[]>('globalThis.statusSeen');
      expect(said.some((text) => /proof-of-work puzzle/.test(text))).toBe(true);

      expect(scripts.some((url) => /proof-of-work/.test(url))).toBe(true);
      expect(scripts.every((url) => url.startsWith(dashboard.url))).toBe(true);
      expect(
        await page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations),
      ).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });

    it('a wrong password after the puzzle is said as such; the next attempt takes the next solution', async () => {
      const context = await newContext(browser, dashboard);
      const page = await context.newPage();
      await recordCspViolations(page);
      await page.goto('/sign-in');
      await page.getByLabel('E-mail').fill(dashboard.ownerEmail);
      const withSolution = async (password: string) => {
        await page.getByLabel('Password').fill(password);
        const answer = page.waitForResponse(
          (r) =>
            r.url().endsWith('/dashboard/api/session') && (r.request().postData() ?? '').includes('"altcha"'),
          { timeout: 60_000 },
        );
        await page.getByRole('button', { name: 'Sign in' }).click();
        return answer;
      };
      for (let i = 0; i < SIGN_IN_CHALLENGE_AFTER; i++) {
        await page.getByLabel('Password').fill(`wrong guess ${i}`);
        const answer = page.waitForResponse((r) => r.url().endsWith('/dashboard/api/session'));
        await page.getByRole('button', { name: 'Sign in' }).click();
        expect((await answer).status()).toBe(401);
      }
      // Refused with 428 first, then sent again with a solution: the password is checked, 401.
      expect((await withSolution('yet another guess')).status()).toBe(401);
      await page
        .getByRole('alert')
        .getByText(/the password is not correct/)
        .waitFor();
      // The widget has started on the next challenge; the page with it passes axe.
      await page.locator('altcha-widget').waitFor();
      const violations = await seriousViolations(page);
      expect(violations, describeViolations('sign-in with the proof of work', violations)).toEqual([]);

      expect((await withSolution(PASSWORD)).status()).toBe(200);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(
        await page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations),
      ).toEqual([]);
      await context.close();
    });
  },
);
