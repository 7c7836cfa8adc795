/**
 * Two-factor sign-in in Chromium against a real `serve`: a member turns TOTP on from the settings
 * page (the QR code the server drew shows as an image under the page's CSP; the code is computed
 * here from the secret the page shows; the password is asked with it), keeps the recovery codes, and signs in with the password
 * and then a code.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import { PASSWORD, addMember, signIn, skipE2e } from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

const STEP_MS = 30_000;

/** Waits for the next 30-second TOTP step: a code of the step just used would be refused as replayed. */
async function nextStep(after: number): Promise<void> {
  const wait = (Math.floor(after / STEP_MS) + 1) * STEP_MS - Date.now();
  if (wait > 0) await sleep(wait + 200);
}

describe.skipIf(skipE2e)('dashboard end to end: two-factor sign-in', { timeout: 120_000 }, () => {
  const e2e = useE2eSuite((d) => addMember(d, d.accountId, 'tess@example.org'));
  const context = () => e2e.context();

  it('turns two factors on from the settings page, then signs in with the password and a code', async () => {
    const first = await context();
    await signIn(first, 'tess@example.org');
    const page = await first.newPage();
    await page.goto('/settings');
    await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();

    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    // Drawn: the data: image loaded under the CSP (img-src 'self' data:), nothing fetched elsewhere.
    expect(
      await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
    ).toBeGreaterThan(0);
    const secret = await page.getByLabel('Secret key').inputValue();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    const enrolledAt = Date.now();
    await page.getByLabel('Code from the app').fill(totpCode(secret, new Date(enrolledAt)));
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    expect(await codes.count()).toBe(10);
    await page.getByRole('button', { name: 'I have saved the codes' }).click();
    await page.getByText('10 of 10 recovery codes left').waitFor();
    expect(e2e.dashboard.stderr()).not.toContain(secret);

    // A new browser: the password alone opens no session; the code does.
    const second = await (await context()).newPage();
    await second.goto('/keys');
    await second.getByRole('heading', { name: 'Sign in' }).waitFor();
    await second.getByLabel('E-mail').fill('tess@example.org');
    await second.getByLabel('Password').fill(PASSWORD);
    await second.getByRole('button', { name: 'Sign in' }).click();
    await second.getByLabel('Authentication code').waitFor();
    const noSession = await second.evaluate(async () => (await fetch('/dashboard/api/session')).status);
    expect(noSession).toBe(401);

    await nextStep(enrolledAt);
    await second.getByLabel('Authentication code').fill(totpCode(secret, new Date()));
    await second.getByRole('button', { name: 'Verify' }).click();
    await second.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(second.url()).pathname).toBe('/keys');
  });
});
