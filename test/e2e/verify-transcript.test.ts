/**
 * The SMTP conversation on the dashboard's verify page, in Chromium against a real `serve` whose
 * live verifications go to an in-process DNS server and a loopback mail host: the box asks for
 * it, the "Show the SMTP conversation" disclosure opens and closes from the keyboard, and the
 * opened conversation has no serious accessibility violation.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acceptInvitation,
  describeViolations,
  launchChromium,
  newContext,
  seriousViolations,
  signIn,
  skipE2e,
  startDashboard,
  type Dashboard,
} from '../kit/e2e.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

describe.skipIf(skipE2e)('dashboard end to end: the SMTP conversation', { timeout: 60_000 }, () => {
  let kit: SmtpKit;
  let dashboard: Dashboard;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['dora'] } });
    [dashboard, browser] = await Promise.all([
      startDashboard({ MAILVERDICT_SMTP_PORT: String(kit.port) }),
      launchChromium(),
    ]);
    dashboard.dns.setDomain('shop.test', { mx: [{ exchange: 'mx1.shop.test', priority: 10 }] });
    dashboard.dns.setDomain('mx1.shop.test', { a: [kit.hosts.mta!.ip] });
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
    context = await newContext(browser, dashboard);
    await signIn(context, dashboard.ownerEmail);
  }, 90_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await dashboard?.stop();
    await kit?.close();
  });

  it('shows the conversation behind a disclosure that the keyboard opens and closes', async () => {
    const page = await context.newPage();
    await page.goto('/verify');
    await page.getByLabel('E-mail address').fill('dora@shop.test');
    await page.getByRole('checkbox', { name: 'Include the SMTP conversation' }).check();
    await page.getByRole('button', { name: 'Verify' }).click();

    const show = page.getByRole('button', { name: 'Show the SMTP conversation' });
    await show.waitFor();
    expect(await show.getAttribute('aria-expanded')).toBe('false');
    const conversation = page.getByRole('list', { name: 'SMTP conversation' });
    expect(await conversation.isVisible()).toBe(false);

    await show.focus();
    await page.keyboard.press('Enter');
    await conversation.waitFor();
    expect(await show.getAttribute('aria-expanded')).toBe('true');
    const lines = await conversation.getByRole('listitem').allTextContents();
    expect(lines[0]).toMatch(/^\+\d+ ms→sent: \[connect mx1\.shop\.test \(127\.0\.0\.\d+\) port \d+\]$/);
    expect(lines.some((l) => l.endsWith('sent: RCPT TO:<dora@shop.test>'))).toBe(true);
    expect(lines.some((l) => /received: 250/.test(l))).toBe(true);

    const violations = await seriousViolations(page);
    expect(violations, describeViolations('verify, conversation open', violations)).toEqual([]);

    await page.keyboard.press('Space');
    await conversation.waitFor({ state: 'hidden' });
    expect(await show.getAttribute('aria-expanded')).toBe('false');
  });
});
