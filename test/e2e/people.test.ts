/**
 * People in several accounts, in Chromium against a real `serve` (issue 16): a member of one
 * account invited to a second opens the link, is asked to sign in (the link sets no password of
 * theirs), signs in, joins, and then switches between the two accounts with the switcher; every
 * page follows the account chosen.
 */
import { describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/dashboard/contract.js';
import { PASSWORD, acceptInvitation, addMember, pageFetch, skipE2e } from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

describe.skipIf(skipE2e)('dashboard end to end: a person in two accounts', { timeout: 90_000 }, () => {
  const e2e = useE2eSuite((d) => acceptInvitation(d, d.ownerInvitation));
  const context = () => e2e.context();

  it('joins a second account from its invitation after signing in, then switches between the two', async () => {
    // Pat is a member of the bootstrap account, and is invited to a second one.
    await addMember(e2e.dashboard, e2e.dashboard.accountId, 'pat@example.com');
    const second = await e2e.dashboard.cli<{ id: string; owner_invitation: { link: string } }>(
      'accounts',
      'create',
      '--email',
      'agency@example.com',
      '--public-base-url',
      e2e.dashboard.url,
    );
    const invitation = await e2e.dashboard.cli<{ link: string }>(
      'members',
      'invite',
      '--account',
      second.id,
      '--email',
      'pat@example.com',
      '--public-base-url',
      e2e.dashboard.url,
    );
    const link = `${e2e.dashboard.url}/accept-invite#${invitation.link.split('#')[1]!}`;

    const page = await (await context()).newPage();
    await page.goto(link);
    // The page tells no one whether Pat has a password here (issue 26, item 4): both ways in are
    // offered, and Pat, who has one, signs in to accept.
    await page.getByRole('link', { name: 'I have a password here: sign in to accept' }).click();
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
      [e2e.dashboard.accountId, second.id].sort(),
    );

    // The switcher lists both; choosing the first account moves every page there.
    const switcher = page.getByLabel('Account');
    await switcher.waitFor();
    expect(await switcher.locator('option').count()).toBe(2);
    await switcher.selectOption(e2e.dashboard.accountId);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect
      .poll(
        async () =>
          (JSON.parse((await pageFetch(page, '/dashboard/api/session')).body) as SessionView).account!.id,
      )
      .toBe(e2e.dashboard.accountId);
    expect(await switcher.inputValue()).toBe(e2e.dashboard.accountId);
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
