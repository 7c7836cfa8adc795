/**
 * The API reference at /docs in Chromium: Swagger UI renders every operation of the served OpenAPI
 * document, shows nothing of a renderer's vendor (no top bar, no offer), can try an operation on
 * this server, asks no other host for anything (every request is logged, and any to another host
 * is refused and reported), and the page's CSP (the dashboard's, with inline styles) refuses
 * nothing.
 */
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acceptInvitation, newContext, signIn, skipE2e, startE2e, type Dashboard } from '../kit/e2e.js';

interface OpenApi {
  paths: Record<string, Record<string, { summary: string }>>;
}
const DOCUMENT = JSON.parse(
  readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'),
) as OpenApi;
const SUMMARIES = Object.values(DOCUMENT.paths).flatMap((item) =>
  Object.values(item).map((op) => op.summary),
);

interface Watched {
  page: Page;
  /** Every URL the page asked for. */
  requests: string[];
  /** Console errors and CSP violation reports. */
  problems: string[];
}

describe.skipIf(skipE2e)('the API reference at /docs', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
  });
  afterEach(async () => {
    while (contexts.length > 0) await contexts.pop()!.close();
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  async function watchedPage(): Promise<Watched & { context: BrowserContext }> {
    const context = await newContext(browser, dashboard);
    contexts.push(context);
    const own = new URL(dashboard.url).origin;
    const requests: string[] = [];
    const problems: string[] = [];
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      requests.push(url);
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === own)
        await route.continue();
      else await route.abort('blockedbyclient');
    });
    // Run through the DevTools protocol, so the page's CSP does not govern this script itself.
    await context.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (event) => " +
        "console.error('CSP violation: ' + event.violatedDirective + ' blocked ' + event.blockedURI));",
    });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return { context, page, requests, problems };
  }

  it('renders every operation of the OpenAPI document, from this server only, with no CSP violation', async () => {
    const { page, requests, problems } = await watchedPage();
    const response = await page.goto('/docs');
    expect(response?.status()).toBe(200);
    const csp = (await response!.allHeaders())['content-security-policy'] ?? '';
    // The dashboard's policy, inline styles aside (docs/security.md).
    expect(csp).toMatch(/(^|;)default-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|;)script-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|;)connect-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|;)style-src 'self' 'unsafe-inline'(;|$)/);

    // The operations of v1: the seven of the specification, the widget's CORS preflight, and the
    // outcomes, filters, outcome sources and accuracy report of docs/outcomes.md.
    expect(SUMMARIES.length).toBe(17);
    // Each operation is listed.
    for (const summary of SUMMARIES) await page.getByText(summary, { exact: true }).first().waitFor();
    await page.getByRole('heading', { name: 'mailverdict API' }).waitFor();
    // Let late requests (lazy chunks, fonts, telemetry) show up before judging.
    await page.waitForLoadState('networkidle');

    // The product only: none of the words of a renderer's top bar, offers or brand.
    const text = await page.locator('body').innerText();
    for (const vendor of [
      'Developer Tools',
      'Configure',
      'Share',
      'Deploy',
      'Generate SDK',
      'Try it out for free',
      'get a demo',
      'Scalar',
      'Swagger',
      'Smartbear',
    ])
      expect(text.toLowerCase(), vendor).not.toContain(vendor.toLowerCase());
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
    // "See docs/api.md" is a link to the guide, served by this server.
    const guide = page.getByRole('link', { name: 'docs/api.md' });
    await expect(guide.getAttribute('href')).resolves.toBe('/docs/api.md');

    const own = new URL(dashboard.url).origin;
    const elsewhere = requests.filter(
      (url) => !url.startsWith('data:') && !url.startsWith('blob:') && new URL(url).origin !== own,
    );
    expect(elsewhere).toEqual([]);
    expect(requests).toContain(`${own}/v1/openapi.json`);
    expect(problems).toEqual([]);
  });

  it('tries an operation on this server with the key typed in', async () => {
    const { page, problems } = await watchedPage();
    await page.goto('/docs');
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    const modal = page.locator('.modal-ux');
    await modal.locator('input').fill('svc_test_not_a_key');
    await modal.getByRole('button', { name: 'Apply credentials' }).click();
    await modal.getByRole('button', { name: 'Close', exact: true }).click();
    const usage = page.locator('.opblock', { hasText: '/v1/account/usage' });
    await usage.locator('.opblock-summary').click();
    await usage.getByRole('button', { name: 'Try it out' }).click();
    const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/v1/account/usage');
    await usage.getByRole('button', { name: 'Execute' }).click();
    const response = await answered;
    expect(response.request().headers().authorization).toBe('Bearer svc_test_not_a_key');
    expect(response.status()).toBe(401);
    await usage
      .locator('.responses-wrapper .live-responses-table')
      .getByText('invalid_api_key')
      .first()
      .waitFor();
    // The 401 in the console is the request's own, not a page problem.
    expect(problems.filter((problem) => !problem.includes('401'))).toEqual([]);
  });

  it('is linked from the dashboard', async () => {
    const { context, page, problems } = await watchedPage();
    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
    await signIn(context, dashboard.ownerEmail);
    await page.goto('/');
    await page.getByRole('link', { name: 'API reference' }).click();
    await page.waitForURL('**/docs');
    await page.getByText(SUMMARIES[0]!, { exact: true }).first().waitFor();
    expect(problems).toEqual([]);
  });
});
