/**
 * Sessions and the security log in Chromium against a real `serve`: the same member signed in in
 * two browser profiles; one ends the other from Settings, and the other is then signed out. The
 * owner then finds it in the Security log page, and the operator with `mailverdict audit`.
 */
import { describe, expect, it } from 'vitest';
import type { AuditPage } from '../../src/dashboard/contract.js';
import { acceptInvitation, signIn, skipE2e } from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';

describe.skipIf(skipE2e)('dashboard end to end: sessions and the security log', { timeout: 90_000 }, () => {
  const e2e = useE2eSuite((d) => acceptInvitation(d, d.ownerInvitationLink));
  const context = (userAgent?: string) => e2e.context(userAgent === undefined ? {} : { userAgent });

  it('one browser ends the other session of the same member, which is then signed out', async () => {
    const here = await context();
    const there = await context(FIREFOX_LINUX);
    await signIn(here, e2e.dashboard.ownerEmail);
    await signIn(there, e2e.dashboard.ownerEmail);
    const otherPage = await there.newPage();
    await otherPage.goto('/settings');
    await otherPage.getByRole('heading', { name: 'Settings' }).waitFor();

    const page = await here.newPage();
    await page.goto('/settings');
    const sessions = page.getByRole('table', { name: 'Sessions' });
    await sessions.getByText('this session').waitFor();
    await sessions.getByRole('button', { name: 'End session Firefox 120 on Linux' }).click();
    await sessions
      .getByRole('button', { name: 'End session Firefox 120 on Linux' })
      .waitFor({ state: 'detached' });

    // The other browser's next request finds its session gone: it is sent to the sign-in page.
    await otherPage.reload();
    await otherPage.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await there.request.get('/dashboard/api/session')).status()).toBe(401);
    // This one goes on.
    expect((await here.request.get('/dashboard/api/session')).status()).toBe(200);
  });

  it('the owner reads the security log in the e2e.dashboard, and the operator with mailverdict audit', async () => {
    const here = await context();
    await signIn(here, e2e.dashboard.ownerEmail);
    const page = await here.newPage();
    await page.goto('/settings/security-log');
    const log = page.getByRole('table', { name: 'Security log' });
    await log.getByRole('rowheader', { name: 'Session ended' }).first().waitFor();
    await page.getByLabel('Event').selectOption('sign_in');
    await log.getByRole('rowheader', { name: 'Signed in' }).first().waitFor();
    expect(await log.getByRole('rowheader', { name: 'Session ended' }).count()).toBe(0);

    const printed = await e2e.dashboard.cli<AuditPage>('audit', '--account', e2e.dashboard.accountId);
    const types = printed.entries.map((e) => e.type);
    expect(types).toContain('session_ended');
    expect(types).toContain('invitation_accepted');
    expect(types.filter((t) => t === 'sign_in').length).toBeGreaterThanOrEqual(3);
  });
});
