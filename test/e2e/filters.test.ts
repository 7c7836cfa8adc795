/**
 * Filters end to end: a filter added in the dashboard's Filters page, with its value normalised by
 * the server and shown back, decides the next live verification through the v1 API; a refused
 * value says why in the page; a filter deleted after its confirmation stops deciding. A real
 * `mailverdict serve` (the built app) and Chromium.
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

describe.skipIf(skipE2e)('dashboard end to end: filters', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  /** A signed-in owner on the filters page, reached from the main navigation. */
  async function filtersPage() {
    const context = await newContext(browser, dashboard);
    contexts.push(context);
    await signIn(context, dashboard.ownerEmail);
    const page = await context.newPage();
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Filters' }).click();
    await page.getByRole('heading', { name: 'Filters' }).waitFor();
    return page;
  }

  /** A live verification through the v1 API, as the account's mail system would ask. */
  const verify = async (email: string) => {
    const res = await fetch(`${dashboard.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dashboard.liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { status: string; reason: string | null; checks: { filter?: unknown } };
  };

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

  it('a block added in the page decides the next API verification; deleted after its confirmation, it no longer does', async () => {
    const page = await filtersPage();
    const address = `ann@mail.${NXDOMAIN}`;
    expect(await verify(address)).toMatchObject({ status: 'undeliverable', reason: 'domain_not_found' });

    const form = page.getByRole('form', { name: 'Add a filter' });
    await form.getByRole('radio', { name: 'Block' }).check();
    await form.getByLabel('Match').selectOption({ label: 'Domain' });
    await form.getByLabel('Value').fill(`@${NXDOMAIN.toUpperCase()}.`);
    await form.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('status').getByText(`Block: domain ${NXDOMAIN} (stored as ${NXDOMAIN}).`).waitFor();
    await page.getByRole('table', { name: 'Filters' }).getByRole('rowheader', { name: NXDOMAIN }).waitFor();

    const blocked = await verify(address);
    expect(blocked).toMatchObject({
      status: 'undeliverable',
      reason: 'blocked_by_filter',
      checks: { filter: { action: 'block', match: 'domain', value: NXDOMAIN } },
    });

    await page.getByRole('button', { name: `Delete the filter domain ${NXDOMAIN}` }).click();
    const confirm = page.getByRole('alertdialog', { name: `Delete the filter for ${NXDOMAIN}?` });
    await confirm.getByRole('button', { name: 'Delete filter' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByText('No filters yet').waitFor();
    expect(await verify(address)).toMatchObject({ status: 'undeliverable', reason: 'domain_not_found' });
  });

  it('an allowed address is deliverable without a network check; a refused value says why in the page', async () => {
    const page = await filtersPage();
    const form = page.getByRole('form', { name: 'Add a filter' });
    await form.getByRole('radio', { name: 'Allow' }).check();
    await form.getByLabel('Match').selectOption({ label: 'Address' });
    await form.getByLabel('Value').fill(`Jane@${NXDOMAIN}`);
    await form.getByRole('button', { name: 'Add filter' }).click();
    await page
      .getByRole('table', { name: 'Filters' })
      .getByRole('rowheader', { name: `jane@${NXDOMAIN}` })
      .waitFor();
    expect(await verify(`JANE@${NXDOMAIN}`)).toMatchObject({
      status: 'deliverable',
      reason: 'allowed_by_filter',
    });

    await form.getByLabel('Match').selectOption({ label: 'Top-level domain' });
    await form.getByLabel('Value').fill('co.uk');
    await form.getByRole('button', { name: 'Add filter' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(
      /^Could not add the filter: value: a top-level domain is one label \(com, io, xn--p1ai\) \(request req_\w+\)$/,
    );
    expect(await form.getByLabel('Value').inputValue()).toBe('co.uk');
  });
});
