/**
 * axe-core in Chromium on every page of the dashboard, with content in it (keys, a finished
 * list, a verification result, members), at desktop and phone width: no serious or critical
 * violation. What axe finds is printed with its selectors.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NXDOMAIN,
  TEST_DOMAIN,
  acceptInvitation,
  addMember,
  describeViolations,
  navigateInApp,
  newContext,
  seriousViolations,
  signIn,
  skipE2e,
  startE2e,
  type Dashboard,
} from '../kit/e2e.js';

/** A page, how to reach it, and what shows that it has loaded (and, for some, what to open first). */
interface Stop {
  name: string;
  path: string;
  ready: (page: Page) => Promise<void>;
}

const heading = (name: string | RegExp) => async (page: Page) => {
  await page.getByRole('heading', { name, level: 1 }).waitFor();
};

describe.skipIf(skipE2e)('dashboard end to end: accessibility (axe-core)', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  let jobId: string;
  const stops: Stop[] = [];

  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
    await addMember(dashboard, dashboard.accountId, 'colleague@example.org');
    // A finished list, so that the job page shows its counts and download.
    const context = await newContext(browser, dashboard);
    try {
      const session = await signIn(context, dashboard.ownerEmail);
      const rows = Array.from(
        { length: 40 },
        (_, i) => `x${i}@${['valid', 'invalid', 'disposable'][i % 3]}.${TEST_DOMAIN},${i}`,
      );
      const upload = await context.request.post(
        '/dashboard/api/lists?name=newsletter&email_column=0&header=false&mode=test',
        {
          headers: { 'content-type': 'text/csv', 'x-csrf-token': session.csrf_token },
          data: rows.join('\n'),
        },
      );
      expect(upload.status()).toBe(202);
      jobId = ((await upload.json()) as { job_id: string }).job_id;
      for (let i = 0; i < 100; i++) {
        const detail = (await (await context.request.get(`/dashboard/api/jobs/${jobId}`)).json()) as {
          job: { status: string };
        };
        if (detail.job.status === 'completed') break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await context.close();
    }
    stops.push(
      { name: 'overview', path: '/', ready: heading('Overview') },
      {
        name: 'keys',
        path: '/keys',
        ready: async (p) => p.getByRole('table', { name: 'API keys' }).waitFor(),
      },
      {
        name: 'create-key dialog',
        path: '/keys',
        ready: async (p) => {
          await p.getByRole('button', { name: 'Create key' }).click();
          await p.getByRole('dialog', { name: 'Create an API key' }).waitFor();
        },
      },
      {
        name: 'filters',
        path: '/filters',
        ready: async (p) => p.getByRole('form', { name: 'Add a filter' }).waitFor(),
      },
      {
        name: 'lists',
        path: '/lists',
        ready: async (p) => p.getByRole('table', { name: 'Your lists' }).waitFor(),
      },
      {
        name: 'upload preview',
        path: '/lists',
        ready: async (p) => {
          await p
            .getByLabel('Or paste addresses')
            .fill(`ann@valid.${TEST_DOMAIN}\nbob@invalid.${TEST_DOMAIN}`);
          await p.getByRole('button', { name: 'Use these addresses' }).click();
          await p.getByLabel('Column with the e-mail addresses').waitFor();
        },
      },
      {
        name: 'a list',
        path: `/lists/${jobId}`,
        ready: async (p) => p.getByRole('figure', { name: 'By verdict' }).waitFor(),
      },
      {
        name: 'verify with a result',
        path: '/verify',
        ready: async (p) => {
          await p.getByLabel('E-mail address').fill(`dora@${NXDOMAIN}`);
          await p.getByRole('button', { name: 'Verify' }).click();
          await p.getByRole('list', { name: 'Checks' }).waitFor();
        },
      },
      {
        name: 'settings',
        path: '/settings',
        ready: async (p) => p.getByRole('table', { name: 'Members' }).waitFor(),
      },
    );
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    it(`no serious or critical violation on any page at ${width} px`, async () => {
      const found: string[] = [];
      const check = async (page: Page, name: string) => {
        const violations = await seriousViolations(page);
        if (violations.length > 0) found.push(describeViolations(`${name} (${width} px)`, violations));
      };
      const visitor: BrowserContext = await newContext(browser, dashboard, { viewport: { width, height } });
      const member: BrowserContext = await newContext(browser, dashboard, { viewport: { width, height } });
      try {
        // The pages a visitor sees.
        const outside = await visitor.newPage();
        for (const [name, path, title] of [
          ['sign-in', '/sign-in', 'Sign in'],
          ['forgot password', '/forgot-password', 'Reset your password'],
          ['expired invitation', '/accept-invite#not-a-real-token', 'Join mailverdict'],
        ] as const) {
          await outside.goto(path);
          await heading(title)(outside);
          await check(outside, name);
        }
        // A failed sign-in shows its error in the page.
        await outside.goto('/sign-in');
        await outside.getByLabel('E-mail').fill(dashboard.ownerEmail);
        await outside.getByLabel('Password').fill('wrong password, surely');
        await outside.getByRole('button', { name: 'Sign in' }).click();
        await outside.getByRole('alert').waitFor();
        await check(outside, 'sign-in error');

        await signIn(member, 'colleague@example.org');
        const page = await member.newPage();
        await page.goto('/');
        for (const stop of stops) {
          // Pages of a signed-in member are reached inside the app, as its links reach them.
          await navigateInApp(page, stop.path);
          await stop.ready(page);
          await check(page, stop.name);
        }
        if (width < 800) {
          // At phone width the navigation folds behind "Menu".
          await page.getByRole('button', { name: 'Menu' }).click();
          await page
            .getByRole('navigation', { name: 'Main' })
            .getByRole('link', { name: 'Settings' })
            .waitFor();
          await check(page, 'menu open');
        }
      } finally {
        await visitor.close();
        await member.close();
      }
      if (found.length > 0) console.error(found.join('\n'));
      expect(found).toEqual([]);
    }, 90_000);
  }
});
