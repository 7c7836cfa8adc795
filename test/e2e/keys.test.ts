/**
 * API keys end to end: a key made in the dashboard works against the v1 API with the secret the
 * Copy button put on the clipboard, its revocation is felt by the very next API request, and the
 * 10-key limit is explained in the page before the server refuses a key.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KeyList } from '../../src/dashboard/contract.js';
import {
  NXDOMAIN,
  acceptInvitation,
  newContext,
  pageFetch,
  signIn,
  skipE2e,
  startE2e,
  type Dashboard,
} from '../kit/e2e.js';

describe.skipIf(skipE2e)('dashboard end to end: API keys', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  /** A signed-in owner on the keys page, in a fresh profile. */
  async function keysPage(options: Parameters<typeof newContext>[2] = {}) {
    const context = await newContext(browser, dashboard, options);
    contexts.push(context);
    const session = await signIn(context, dashboard.ownerEmail);
    const page = await context.newPage();
    await page.goto('/keys');
    await page.getByRole('table', { name: 'API keys' }).waitFor();
    return { context, page, session };
  }

  const verify = (key: string) =>
    fetch(`${dashboard.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `someone@${NXDOMAIN}` }),
    });

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

  it('a key created in the page, copied with its Copy button, verifies through POST /v1/verify; revoked, the next call gets 401', async () => {
    const { context, page } = await keysPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.url });

    await page.getByRole('button', { name: 'Create key' }).click();
    const create = page.getByRole('dialog', { name: 'Create an API key' });
    await create.getByLabel('Name').fill('signup form');
    await create.getByRole('radio', { name: 'Live' }).check();
    await create.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    await shown.getByText('This is the only time the secret is shown').waitFor();
    const displayed = await shown.getByLabel('Secret').inputValue();
    expect(displayed).toMatch(/^svc_live_/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByRole('status').getByText('Copied').waitFor();
    const copied = await page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    );
    expect(copied).toBe(displayed);

    const answer = await verify(copied);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ email: `someone@${NXDOMAIN}`, status: 'undeliverable' });

    await shown.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'signup form' }) });
    await row.getByText('Active').waitFor();
    await page.getByRole('button', { name: 'Revoke signup form' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Revoke the key signup form?' });
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.getByText('Revoked').waitFor();

    // The key answered a moment ago (and sits in the server's key cache): the next call is refused.
    const refused = await verify(copied);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'revoked_api_key' });
  }, 60_000);

  it('rotating a key shows the replacement once, and revoking the old one is offered after', async () => {
    const { page } = await keysPage();
    const old = dashboard.testKey;
    expect((await verify(old)).status).toBe(200);
    const testRow = page.getByRole('row').filter({ hasText: 'Test' }).filter({ hasText: 'Active' }).first();
    const name = (await testRow.getByRole('rowheader').innerText()).trim();
    await page.getByRole('button', { name: `Rotate ${name}` }).click();
    await page
      .getByRole('alertdialog', { name: `Rotate the key ${name}?` })
      .getByRole('button', { name: 'Create replacement' })
      .click();
    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    const replacement = await shown.getByLabel('Secret').inputValue();
    expect(replacement).toMatch(/^svc_test_/);
    // Until the member confirms, both work.
    expect((await verify(old)).status).toBe(200);
    expect((await verify(replacement)).status).toBe(200);
    await shown.getByRole('button', { name: 'Revoke the old key now' }).click();
    await shown.waitFor({ state: 'detached' });
    expect((await verify(old)).status).toBe(401);
    expect((await verify(replacement)).status).toBe(200);
  }, 60_000);

  it('the 10-key limit is explained before it bites, then Create key is disabled with the reason', async () => {
    const { page, session } = await keysPage();
    const list = async () => JSON.parse((await pageFetch(page, '/dashboard/api/keys')).body) as KeyList;
    const create = (name: string) =>
      pageFetch(page, '/dashboard/api/keys', {
        method: 'POST',
        body: { name, kind: 'test', scopes: ['verify'] },
        csrf: session.csrf_token,
      });

    // Up to 8 active keys through the API (quicker), then the page has to tell.
    const { active, limit } = await list();
    expect(limit).toBe(10);
    for (let i = active; i < 8; i++) expect((await create(`bulk ${i}`)).status).toBe(201);
    await page.reload();
    await page.getByText('8 of 10 active keys').waitFor();
    await page.getByText('An account can hold at most 10 active keys; 2 more can be created.').waitFor();

    for (const name of ['ninth', 'tenth']) await createInPage(page, name);
    await page.getByText('10 of 10 active keys').waitFor();
    const note = page.getByText('You have 10 active keys, the most an account can hold.');
    await note.waitFor();
    expect(await note.innerText()).toContain('Revoke a key you no longer use to create another one.');
    const button = page.getByRole('button', { name: 'Create key' });
    expect(await button.isDisabled()).toBe(true);
    // The disabled button says why to a screen reader too.
    expect(await button.getAttribute('aria-describedby')).toBe('key-limit');

    // The server enforces what the page explains.
    const refused = await create('eleventh');
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'key_limit_reached' });
    expect((await list()).active).toBe(10);
  });
});

async function createInPage(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create an API key' });
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByRole('radio', { name: 'Test' }).check();
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const shown = page.getByRole('dialog', { name: 'Your new API key' });
  await shown.getByRole('button', { name: 'Done' }).click();
  await shown.waitFor({ state: 'detached' });
}
