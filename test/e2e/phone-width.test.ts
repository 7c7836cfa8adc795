/**
 * Every page of the dashboard on a 390 px phone, in Chromium, with and without an error shown:
 * the page is no wider than the screen (nothing scrolls sideways into empty space), and a wide
 * table scrolls inside its own box. A long unbroken word (an error's `(request req_…)`, a key, an
 * origin) wraps instead of widening its card. What overflows is named with its width.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  NXDOMAIN,
  TEST_DOMAIN,
  acceptInvitation,
  navigateInApp,
  signIn,
  skipE2e,
  type Dashboard,
} from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

const PHONE = { width: 390, height: 844 };

/**
 * How wide the page is, and the elements that stick out of the screen (outside any box that
 * scrolls sideways on its own), widest first.
 */
async function overflow(page: Page): Promise<{ width: number; sticking: string[] }> {
  // A string, run in the page (the tests are compiled without the DOM's types).
  return page.evaluate<{ width: number; sticking: string[] }>(`(() => {
    const screenWidth = document.documentElement.clientWidth;
    const scrolls = (el) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    const sticking = [];
    for (const el of document.body.querySelectorAll('*')) {
      let inside = false;
      for (let up = el.parentElement; up && up !== document.body; up = up.parentElement)
        if (scrolls(up)) inside = true;
      const right = el.getBoundingClientRect().right + window.scrollX;
      if (!inside && right > screenWidth + 0.5) {
        const cls = typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '';
        sticking.push({ name: el.tagName.toLowerCase() + cls + ' to ' + Math.round(right) + ' px', right });
      }
    }
    sticking.sort((a, b) => b.right - a.right);
    return {
      width: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
      sticking: sticking.slice(0, 5).map((s) => s.name),
    };
  })()`);
}

describe.skipIf(skipE2e)('every page fits a 390 px phone', { timeout: 120_000 }, () => {
  const suite = useE2eSuite(async (dashboard: Dashboard) => {
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
  });

  async function fits(page: Page, name: string, found: string[]): Promise<void> {
    const { width, sticking } = await overflow(page);
    if (width > PHONE.width) found.push(`${name}: ${width} px wide (${sticking.join(', ')})`);
  }

  it('the pages a visitor sees, and a failed sign-in with its request id', async () => {
    const context = await suite.context({ viewport: PHONE });
    const page = await context.newPage();
    const found: string[] = [];
    for (const [name, path, title] of [
      ['sign-in', '/sign-in', 'Sign in'],
      ['forgot password', '/forgot-password', 'Reset your password'],
      ['expired invitation', '/accept-invite#not-a-real-token', 'Join mailverdict'],
      ['expired reset link', '/reset-password#not-a-real-token', 'Choose a new password'],
      ['unusable address link', '/confirm-email#not-a-real-token', 'Confirm your new address'],
    ] as const) {
      await page.goto(path);
      await page.getByRole('heading', { name: title, level: 1 }).waitFor();
      if (path.startsWith('/confirm-email')) await page.getByRole('alert').waitFor();
      await fits(page, name, found);
    }
    await page.goto('/sign-in');
    await page.getByLabel('E-mail').fill(suite.dashboard.ownerEmail);
    await page.getByLabel('Password').fill('wrong password, surely');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/\(request req_/);
    await fits(page, 'sign-in error', found);
    expect(found).toEqual([]);
  });

  it("a member's pages, with content, and with an error shown", async () => {
    const context = await suite.context({ viewport: PHONE });
    const session = await signIn(context, suite.dashboard.ownerEmail);
    // A finished list with a long file name, and a publishable key with a long origin.
    const rows = Array.from(
      { length: 12 },
      (_, i) => `x${i}@${['valid', 'invalid', 'disposable'][i % 3]}.${TEST_DOMAIN},${i}`,
    );
    const upload = await context.request.post(
      '/dashboard/api/lists?name=a-newsletter-export-with-a-rather-long-file-name-2026-11-28.csv&email_column=0&header=false&mode=test',
      {
        headers: { 'content-type': 'text/csv', 'x-csrf-token': session.csrf_token },
        data: rows.join('\n'),
      },
    );
    expect(upload.status()).toBe(202);
    const jobId = ((await upload.json()) as { job_id: string }).job_id;

    const page = await context.newPage();
    await page.goto('/');
    const found: string[] = [];
    const stops: [string, string, (p: Page) => Promise<void>][] = [
      ['overview', '/', (p) => p.getByRole('heading', { name: 'Overview', level: 1 }).waitFor()],
      ['keys', '/keys', (p) => p.getByRole('table', { name: 'API keys' }).waitFor()],
      ['filters', '/filters', (p) => p.getByRole('form', { name: 'Add a filter' }).waitFor()],
      [
        'integrations',
        '/integrations',
        (p) => p.getByRole('button', { name: 'Connect a mail system' }).waitFor(),
      ],
      ['lists', '/lists', (p) => p.getByRole('table', { name: 'Your lists' }).waitFor()],
      ['a list', `/lists/${jobId}`, (p) => p.getByRole('figure', { name: 'By verdict' }).waitFor()],
      ['verify', '/verify', (p) => p.getByLabel('E-mail address').waitFor()],
      ['outcomes', '/outcomes', (p) => p.getByRole('heading', { name: 'How accurate are we?' }).waitFor()],
      ['settings', '/settings', (p) => p.getByRole('table', { name: 'Members' }).waitFor()],
      [
        'security log',
        '/settings/security-log',
        (p) => p.getByRole('heading', { level: 1, name: /Security/ }).waitFor(),
      ],
    ];
    for (const [name, path, ready] of stops) {
      await navigateInApp(page, path);
      await ready(page);
      await fits(page, name, found);
    }

    // Errors, each with its request id, and content that is long by nature.
    await navigateInApp(page, '/verify');
    await page.getByLabel('E-mail address').fill(`dora@${NXDOMAIN}`);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('list', { name: 'Checks' }).waitFor();
    await fits(page, 'verify with a result', found);
    await page.getByLabel('E-mail address').fill('nope@');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: '(request req_' }).waitFor();
    await fits(page, 'verify with an error', found);

    await navigateInApp(page, '/lists');
    await page.getByLabel('Or paste addresses').fill(`ann@valid.${TEST_DOMAIN}\nbob@invalid.${TEST_DOMAIN}`);
    await page.getByRole('button', { name: 'Use these addresses' }).click();
    await page.getByLabel('Column with the e-mail addresses').waitFor();
    await fits(page, 'upload preview', found);

    await navigateInApp(page, '/keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const create = page.getByRole('dialog', { name: 'Create an API key' });
    await create.getByLabel('Name').fill('signup widget');
    await create.getByRole('checkbox', { name: 'Publishable key for web pages' }).check();
    await create.getByLabel('Allowed origins').fill('https://a-shop-with-a-very-long-name.example');
    await fits(page, 'create-key dialog', found);
    await create.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    await shown.waitFor();
    await fits(page, 'new publishable key with its snippet', found);
    await shown
      .getByRole('button', { name: /Done|Close/ })
      .first()
      .click();

    await navigateInApp(page, '/settings');
    const password = page
      .getByRole('heading', { name: 'Change password' })
      .locator('xpath=ancestor::section');
    await password.getByLabel('Current password').fill('not my password at all');
    await password.getByLabel('New password', { exact: true }).fill('a new long password 2026');
    await password.getByLabel('Repeat the new password').fill('a new long password 2026');
    await password.getByRole('button', { name: 'Change password' }).click();
    await password.getByRole('alert').filter({ hasText: '(request req_' }).waitFor();
    await fits(page, 'settings with an error', found);

    // The menu, open.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).waitFor();
    await fits(page, 'menu open', found);
    expect(found).toEqual([]);
  });

  it('a wide table scrolls inside its own box', async () => {
    const context = await suite.context({ viewport: PHONE });
    await signIn(context, suite.dashboard.ownerEmail);
    const page = await context.newPage();
    await page.goto('/keys');
    const table = page.getByRole('table', { name: 'API keys' });
    await table.waitFor();
    const box = await page.evaluate<{ overflowX: string; width: number } | null>(`(() => {
      const scroller = document.querySelector('table').closest('.table-scroll');
      return scroller === null
        ? null
        : { overflowX: getComputedStyle(scroller).overflowX, width: scroller.getBoundingClientRect().width };
    })()`);
    expect(box).not.toBeNull();
    expect(box!.overflowX).toBe('auto');
    expect(box!.width).toBeLessThanOrEqual(PHONE.width);
  });
});
