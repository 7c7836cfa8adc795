/**
 * The signup-form widget end to end (docs/widget.md): the built `serve` answers /widget.js and
 * POST /v1/verify, and the signup page comes from ANOTHER origin (a second local HTTP server on
 * another port), as on a real shop. A publishable test key allows that origin only: a third
 * server's page, not allowed, gets no opinion. In Chromium: the typo suggestion fixes the field,
 * an undeliverable address blocks the form, an unknown one does not, and axe-core finds nothing.
 * The dashboard's keys page shows the snippet with the served file's SRI hash.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TEST_DOMAIN,
  acceptInvitation,
  describeViolations,
  newContext,
  seriousViolations,
  signIn,
  skipE2e,
  startE2e,
  type Dashboard,
} from '../kit/e2e.js';

interface Shop {
  url: string;
  server: Server;
  /** Verification requests the /stall/ copy of the widget sent (they are never answered). */
  readonly stalled: number;
  /** Submissions that reached /thanks. */
  readonly thanks: number;
}

/**
 * A shop: its signup form (with the widget's snippet) at /, a thank-you page at /thanks. /plain
 * has the widget's default debounce; /stall loads the widget from the shop itself
 * (/stall/widget.js, the served file), so that its verifications go to /stall/v1/verify, which
 * never answers: a server that is up but does not answer in time.
 */
async function startShop(widgetUrl: string, key: () => string): Promise<Shop> {
  const widgetBody = await (await fetch(widgetUrl)).text();
  const page = (block: string, script = `src="${widgetUrl}" data-debounce="50"`) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title>
<script ${script} data-key="${key()}" defer></script></head>
<body><main><h1>Sign up</h1>
<form action="/thanks" method="get">
  <label for="email">E-mail</label>
  <input id="email" type="email" name="email" autocomplete="email" data-mailverdict${block}>
  <button type="submit">Create account</button>
</form></main></body></html>`;
  const held: ServerResponse[] = [];
  let thanks = 0;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/stall/widget.js') {
      res.setHeader('content-type', 'text/javascript; charset=utf-8');
      return res.end(widgetBody);
    }
    if (path === '/stall/v1/verify') {
      held.push(res);
      return;
    }
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (path === '/') return res.end(page(''));
    if (path === '/plain') return res.end(page('', `src="${widgetUrl}"`));
    if (path === '/stall') return res.end(page(' data-submit-wait="300"', 'src="/stall/widget.js"'));
    // A stricter form: disposable addresses blocked too.
    if (path === '/strict') return res.end(page(' data-block="undeliverable disposable"'));
    if (path === '/favicon.ico') return res.writeHead(204).end();
    if (path === '/thanks') thanks += 1;
    if (path === '/thanks') return res.end('<!doctype html><title>Thanks</title><h1>Thanks</h1>');
    res.statusCode = 404;
    res.end('not found');
  });
  server.on('close', () => held.forEach((res) => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    get stalled() {
      return held.length;
    },
    get thanks() {
      return thanks;
    },
  };
}

describe.skipIf(skipE2e)('the widget end to end, on a page of another origin', { timeout: 60_000 }, () => {
  let dashboard: Dashboard;
  let browser: Browser;
  let shop: Shop;
  let stranger: Shop;
  const contexts: BrowserContext[] = [];
  /** Every host a shop page asked something of. */
  const hosts = new Set<string>();

  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
    // The origins are known once the servers listen; the key is made for the shop's only.
    let key = '';
    shop = await startShop(`${dashboard.url}/widget.js`, () => key);
    stranger = await startShop(`${dashboard.url}/widget.js`, () => key);
    const created = await dashboard.cli<{ key: string }>(
      'keys',
      'create',
      '--account',
      dashboard.accountId,
      '--kind',
      'test',
      '--publishable',
      '--allowed-origin',
      shop.url,
      // Every page here is one visitor (127.0.0.1): the default 2 per second would answer some
      // of this suite's quick verifications 429, which the widget rightly shows as no opinion.
      // The limits themselves are tested in test/api/publishable.test.ts; the daily cap (2 % of
      // the bootstrap account's quota by default, test/api/publishable-spend.test.ts) too.
      '--visitor-rate-limit',
      '1000',
      '--key-rate-limit',
      '1000',
      '--daily-cap',
      '1000',
    );
    key = created.key;
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    shop?.server.close();
    stranger?.server.close();
    shop?.server.closeAllConnections();
    stranger?.server.closeAllConnections();
    await dashboard?.stop();
  });

  async function signupPage(url: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1024, height: 700 } });
    contexts.push(context);
    const page = await context.newPage();
    page.on('request', (request) => hosts.add(new URL(request.url()).origin));
    await page.goto(url);
    await page.locator('#email[data-mailverdict-ready]').waitFor({ state: 'attached' });
    return page;
  }

  const email = (page: Page) => page.getByLabel('E-mail');
  const status = (page: Page) => email(page).getAttribute('data-mailverdict-status');

  /** Types an address and leaves the field with Tab, as a visitor does; waits for the verdict. */
  async function enter(page: Page, address: string): Promise<string | null> {
    await email(page).fill(address);
    await email(page).press('Tab');
    await page.waitForFunction(
      "!['checking', null].includes(document.getElementById('email').getAttribute('data-mailverdict-status'))",
    );
    return status(page);
  }

  it('suggests a correction while typing, and the suggestion button fixes the field', async () => {
    const page = await signupPage(shop.url);
    await email(page).pressSequentially('anna@gmial.com');
    const suggestion = page.getByRole('button', { name: 'Use anna@gmail.com' });
    await suggestion.waitFor();
    await expect(page.locator('.mailverdict-message').textContent()).resolves.toBe(
      'Did you mean anna@gmail.com?',
    );
    await suggestion.click();
    await expect(email(page).inputValue()).resolves.toBe('anna@gmail.com');
    await expect(page.getByRole('button', { name: /Use / }).count()).resolves.toBe(0);
  });

  it('blocks the submission of an undeliverable address and says why in the live region', async () => {
    const page = await signupPage(shop.url);
    expect(await enter(page, `anna@invalid.${TEST_DOMAIN}`)).toBe('undeliverable');
    const region = page.locator('[aria-live]');
    await expect(region.textContent()).resolves.toBe('This address cannot receive mail.');
    await expect(email(page).getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByRole('button', { name: 'Create account' }).click();
    // Still the form: the submission was stopped, and the field has the focus back.
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('email');

    const violations = await seriousViolations(page);
    expect(violations, describeViolations('signup page', violations)).toEqual([]);
  });

  it('lets an unknown address through, and a deliverable one', async () => {
    const page = await signupPage(shop.url);
    expect(await enter(page, `anna@valid.${TEST_DOMAIN}`)).toBe('deliverable');
    expect(await enter(page, 'anna@somewhere-else.example.org')).toBe('unknown');
    await Promise.all([
      page.waitForURL(/\/thanks/),
      page.getByRole('button', { name: 'Create account' }).click(),
    ]);
    // The widget asked nothing of any host but the mailverdict server (and the page its own).
    expect([...hosts].sort()).toEqual([dashboard.url, shop.url].sort());
  });

  it('blocks a disposable address where data-block lists disposable, and lets it through elsewhere', async () => {
    const strict = await signupPage(`${shop.url}/strict`);
    expect(await enter(strict, `anna@disposable.${TEST_DOMAIN}`)).toBe('risky');
    await expect(strict.locator('[aria-live]').textContent()).resolves.toBe(
      'This is a disposable address. Please use a permanent one.',
    );
    await strict.getByRole('button', { name: 'Create account' }).click();
    expect(new URL(strict.url()).pathname).toBe('/strict');

    // Where it does not block, it still says what the address is (not "may not receive mail").
    const lenient = await signupPage(shop.url);
    expect(await enter(lenient, `anna@disposable.${TEST_DOMAIN}`)).toBe('risky');
    await expect(lenient.locator('[aria-live]').textContent()).resolves.toBe(
      'This is a disposable address. Please use a permanent one.',
    );
    await Promise.all([
      lenient.waitForURL(/\/thanks/),
      lenient.getByRole('button', { name: 'Create account' }).click(),
    ]);
  });

  it('gives no opinion on a page of an origin the key does not allow, never blocks it, and tells the developer why once', async () => {
    const page = await signupPage(stranger.url);
    const said: string[] = [];
    page.on('console', (message) => {
      if (message.text().startsWith('mailverdict widget:')) said.push(message.text());
    });
    const explained = page.waitForEvent('console', (message) =>
      message.text().startsWith('mailverdict widget:'),
    );
    // The preflight is refused (403 origin_not_allowed), so the browser never sends the POST.
    expect(await enter(page, `anna@invalid.${TEST_DOMAIN}`)).toBe('unknown');
    await expect(page.locator('[aria-live]').textContent()).resolves.toBe('');
    const text = (await explained).text();
    expect(text).toContain(`this page's origin ${stranger.url}`);
    expect(text).toContain(`Add ${stranger.url} to the allowed origins of the publishable key`);
    expect(text).toContain(`--allowed-origin ${stranger.url}`);
    // A second refused verification says nothing more.
    expect(await enter(page, `ben@invalid.${TEST_DOMAIN}`)).toBe('unknown');
    expect(said).toEqual([text]);
    await Promise.all([
      page.waitForURL(/\/thanks/),
      page.getByRole('button', { name: 'Create account' }).click(),
    ]);
  });

  it('holds a submission made with Enter straight after typing until the verdict, and blocks an undeliverable address', async () => {
    // /plain: the default 300 ms between leaving the field and the request; Enter leaves nothing.
    const page = await signupPage(`${shop.url}/plain`);
    const before = shop.thanks;
    await email(page).pressSequentially(`x@invalid.${TEST_DOMAIN}`);
    await email(page).press('Enter');
    await page.waitForFunction(
      "document.getElementById('email').getAttribute('data-mailverdict-status') === 'undeliverable'",
    );
    await expect(page.locator('[aria-live]').textContent()).resolves.toBe(
      'This address cannot receive mail.',
    );
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('email');
    expect(new URL(page.url()).pathname).toBe('/plain');
    expect(shop.thanks).toBe(before);
  });

  it('holds a click on the submit button straight after typing until the verdict, and blocks an undeliverable address', async () => {
    const page = await signupPage(`${shop.url}/plain`);
    const before = shop.thanks;
    await email(page).fill(`x@invalid.${TEST_DOMAIN}`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForFunction(
      "document.getElementById('email').getAttribute('data-mailverdict-status') === 'undeliverable'",
    );
    await expect(email(page).getAttribute('aria-invalid')).resolves.toBe('true');
    expect(new URL(page.url()).pathname).toBe('/plain');
    expect(shop.thanks).toBe(before);
  });

  it('submits a held deliverable address once its verdict is in, once', async () => {
    const page = await signupPage(`${shop.url}/plain`);
    const before = shop.thanks;
    await email(page).pressSequentially(`x@valid.${TEST_DOMAIN}`);
    await Promise.all([page.waitForURL(/\/thanks/), email(page).press('Enter')]);
    expect(new URL(page.url()).searchParams.get('email')).toBe(`x@valid.${TEST_DOMAIN}`);
    expect(shop.thanks).toBe(before + 1);
  });

  it('submits after data-submit-wait when the server does not answer in time: a wait never blocks', async () => {
    const page = await signupPage(`${shop.url}/stall`);
    const before = shop.stalled;
    await email(page).pressSequentially(`x@invalid.${TEST_DOMAIN}`);
    await Promise.all([page.waitForURL(/\/thanks/), email(page).press('Enter')]);
    // The verification was asked (and is still unanswered) when the form went through.
    expect(shop.stalled).toBe(before + 1);
  });

  it('marks the field itself with a ring of its own colour for each status', async () => {
    const ring = (page: Page) =>
      page.evaluate<string>("getComputedStyle(document.getElementById('email')).boxShadow");
    const stalled = await signupPage(`${shop.url}/stall`);
    await expect(ring(stalled)).resolves.toBe('none');
    await email(stalled).fill(`x@valid.${TEST_DOMAIN}`);
    await email(stalled).press('Tab');
    await stalled.waitForFunction(
      "document.getElementById('email').getAttribute('data-mailverdict-status') === 'checking'",
    );
    const marks: Record<string, string> = { checking: await ring(stalled) };
    const page = await signupPage(shop.url);
    for (const [domain, expected] of [
      ['valid', 'deliverable'],
      ['disposable', 'risky'],
      ['invalid', 'undeliverable'],
      ['somewhere-else.example.org', 'unknown'],
    ] as const) {
      const address = domain.includes('.') ? `x@${domain}` : `x@${domain}.${TEST_DOMAIN}`;
      expect(await enter(page, address)).toBe(expected);
      marks[expected] = await ring(page);
    }
    expect(marks).toEqual({
      checking: 'rgb(11, 87, 208) 0px 0px 0px 2px',
      deliverable: 'rgb(27, 110, 32) 0px 0px 0px 2px',
      risky: 'rgb(122, 74, 0) 0px 0px 0px 2px',
      undeliverable: 'rgb(176, 0, 32) 0px 0px 0px 2px',
      unknown: 'rgb(107, 107, 107) 0px 0px 0px 2px',
    });
  });

  it("announces a suggestion with $&, $' or $` in its address exactly as typed", async () => {
    const page = await signupPage(shop.url);
    const local = "a$&b$'c$`d";
    await email(page).pressSequentially(`${local}@gmial.com`);
    const suggestion = page.getByRole('button', { name: `Use ${local}@gmail.com`, exact: true });
    await suggestion.waitFor();
    await expect(page.locator('.mailverdict-message').textContent()).resolves.toBe(
      `Did you mean ${local}@gmail.com?`,
    );
    await expect(suggestion.getAttribute('aria-label')).resolves.toBe(`Use ${local}@gmail.com`);
  });

  it('serves /widget.js with a day of caching, an ETag and CORS, and the keys page shows its integrity', async () => {
    const res = await fetch(`${dashboard.url}/widget.js`);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const etag = res.headers.get('etag') ?? '';
    expect((await fetch(`${dashboard.url}/widget.js`, { headers: { 'if-none-match': etag } })).status).toBe(
      304,
    );
    const integrity = `sha384-${createHash('sha384').update(body).digest('base64')}`;

    await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
    const context = await newContext(browser, dashboard);
    contexts.push(context);
    await signIn(context, dashboard.ownerEmail);
    const page = await context.newPage();
    await page.goto('/keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const create = page.getByRole('dialog', { name: 'Create an API key' });
    await create.getByLabel('Name').fill('signup widget');
    await create.getByRole('checkbox', { name: 'Publishable key for web pages' }).check();
    await create.getByLabel('Allowed origins').fill(shop.url);
    await create.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    const secret = await shown.getByLabel('Publishable key').inputValue();
    expect(secret).toMatch(/^svc_live_pub_/);
    const snippet = await shown.getByRole('textbox', { name: 'Snippet' }).inputValue();
    expect(snippet).toContain(`integrity="${integrity}"`);
    expect(snippet).toContain(`data-key="${secret}"`);
    const violations = await seriousViolations(page);
    expect(violations, describeViolations('keys page with a snippet', violations)).toEqual([]);
  });
});
