/**
 * Integrations end to end: Postmark connected in the dashboard's Integrations page, its webhook URL
 * (with the basic-auth credentials) shown once; a hard bounce Postmark delivers there suppresses the
 * address in the next v1 verification and shows in the page's counts; deleted after its
 * confirmation, the URL is refused. A real `mailverdict serve` (the built app) and Chromium.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  NXDOMAIN,
  acceptInvitation,
  newContext,
  signIn,
  skipE2e,
  startE2e,
  type Dashboard,
} from '../kit/e2e.js';

describe.skipIf(skipE2e)('dashboard end to end: integrations', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  /** Postmark's POST of a hard bounce to the URL it was given (credentials from the URL). */
  const bounce = (webhookUrl: string, email: string) => {
    const url = new URL(webhookUrl);
    return fetch(`${dashboard.url}${url.pathname}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${url.username}:${url.password}`).toString('base64')}`,
      },
      body: JSON.stringify({
        RecordType: 'Bounce',
        MessageStream: 'outbound',
        ID: 4323372036,
        Type: 'HardBounce',
        TypeCode: 1,
        Name: 'Hard bounce',
        MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
        Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
        Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist',
        Email: email,
        From: 'sender@sends.example',
        BouncedAt: new Date(Date.now() - 60_000).toISOString(),
        Inactive: true,
        CanActivate: true,
        Subject: 'Welcome',
      }),
    });
  };

  const verify = async (email: string) => {
    const res = await fetch(`${dashboard.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dashboard.liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { status: string; reason: string | null };
  };

  it('a Postmark source made in the page takes a hard bounce that suppresses the address; deleted, its URL is refused', async () => {
    const context = await newContext(browser, dashboard);
    contexts.push(context);
    await signIn(context, dashboard.ownerEmail);
    const page = await context.newPage();
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Integrations' }).click();
    await page.getByRole('heading', { name: 'Integrations' }).waitFor();

    await page.getByRole('button', { name: 'Connect a mail system' }).click();
    const form = page.getByRole('dialog', { name: 'Connect a mail system' });
    await form.getByRole('radio', { name: /Postmark/ }).check();
    await form.getByLabel('Name').fill('transactional');
    await form.getByRole('button', { name: 'Connect' }).click();
    const shown = page.getByRole('dialog', { name: 'Your webhook URL' });
    const webhookUrl = await shown.getByLabel('Webhook URL').inputValue();
    expect(webhookUrl).toMatch(
      /^https?:\/\/mailverdict:[0-9A-Za-z]{32}@.+\/hooks\/outcomes\/osrc_[0-9A-Za-z]{16}\/[0-9A-Za-z]{32}$/,
    );
    await shown.getByRole('button', { name: 'Done' }).click();

    const address = `gone@mail.${NXDOMAIN}`;
    expect(await verify(address)).toMatchObject({ status: 'undeliverable', reason: 'domain_not_found' });
    const res = await bounce(webhookUrl, address);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ taken: 1 });
    expect(await verify(address)).toMatchObject({ status: 'undeliverable', reason: 'previously_bounced' });

    await page.reload();
    const row = page.getByRole('table', { name: 'Mail systems' }).getByRole('row', { name: /transactional/ });
    await expect.poll(() => row.innerText()).toMatch(/Postmark\s+1\s+0/);

    await page.getByRole('button', { name: 'Delete transactional' }).click();
    await page
      .getByRole('alertdialog', { name: 'Delete transactional?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByText('No mail system connected yet.').waitFor();
    expect((await bounce(webhookUrl, `other@mail.${NXDOMAIN}`)).status).toBe(401);
  });
});
