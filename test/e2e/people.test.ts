/**
 * People in several accounts, in Chromium against a real `serve` (issue 16): a member of one
 * account invited to a second opens the link, is asked to sign in (the link sets no password of
 * theirs), signs in, joins, and then switches between the two accounts with the switcher; every
 * page follows the account chosen.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/dashboard/contract.js';
import {
  PASSWORD,
  acceptInvitation,
  addMember,
  newContext,
  pageFetch,
  skipE2e,
  startE2e,
  type Dashboard,
} from '../kit/e2e.js';

describe.skipIf(skipE2e)('dashboard end to end: a person in two accounts', { timeout: 90_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const context = async () => {
    const made = await newContext(browser, dashboard);
    contexts.push(made);
    return made;
  };

  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
    await acceptInvitation(dashboard, dashboard.ownerInvitation);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  it('joins a second account from its invitation after signing in, then switches between the two', async () => {
    // Pat is a member of the bootstrap account, and is invited to a second one.
    await addMember(dashboard, dashboard.accountId, 'pat@example.com');
    const second = await dashboard.cli<{ id: string; owner_invitation: { link: string } }>(
      'accounts',
      'create',
      '--email',
      'agency@example.com',
      '--public-base-url',
      dashboard.url,
    );
    const invitation = await dashboard.cli<{ link: string }>(
      'members',
      'invite',
      '--account',
      second.id,
      '--email',
      'pat@example.com',
      '--public-base-url',
      dashboard.url,
    );
    const link = `${dashboard.url}/accept-invite#${invitation.link.split('#')[1]!}`;

    const page = await (await context()).newPage();
    await page.goto(link);
    await page.getByText('which has a password already').waitFor();
    // No password field: the link cannot set Pat's password.
    expect(await page.getByLabel('New password').count()).toBe(0);
    await page.getByRole('link', { name: 'Sign in to accept' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill('pat@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back on the invitation, signed in: one button joins.
    await page.getByRole('button', { name: 'Join the account' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).hash).toBe('');

    const inSecond = JSON.parse((await pageFetch(page, '/dashboard/api/session')).body) as SessionView;
    expect(inSecond.account!.id).toBe(second.id);
    expect(inSecond.memberships.map((m) => m.account_id).sort()).toEqual(
      [dashboard.accountId, second.id].sort(),
    );

    // The switcher lists both; choosing the first account moves every page there.
    const switcher = page.getByLabel('Account');
    await switcher.waitFor();
    expect(await switcher.locator('option').count()).toBe(2);
    await switcher.selectOption(dashboard.accountId);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect
      .poll(
        async () =>
          (JSON.parse((await pageFetch(page, '/dashboard/api/session')).body) as SessionView).account!.id,
      )
      .toBe(dashboard.accountId);
    expect(await switcher.inputValue()).toBe(dashboard.accountId);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // The bootstrap account's keys are listed here, the second account has none of them.
    const keys = JSON.parse((await pageFetch(page, '/dashboard/api/keys')).body) as { keys: unknown[] };
    expect(keys.keys.length).toBeGreaterThan(0);

    await switcher.selectOption(second.id);
    await expect
      .poll(
        async () =>
          (JSON.parse((await pageFetch(page, '/dashboard/api/keys')).body) as { keys: unknown[] }).keys
            .length,
      )
      .toBe(0);
  });
});
