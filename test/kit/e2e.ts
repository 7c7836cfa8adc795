/**
 * The dashboard end to end: a real `mailverdict serve` (the built dist/, as `npm start` runs it)
 * on a temporary data directory and a free loopback port, an in-process DNS server for live
 * verifications (every name it does not know answers NXDOMAIN, so a live verification ends as
 * `undeliverable` without SMTP and never leaves the machine), the operator's CLI on the same
 * store, and Debian's Chromium driven by playwright-core (no downloaded browser).
 *
 * Without /usr/bin/chromium the suites are skipped with one printed line, unless
 * MAILVERDICT_E2E_REQUIRED=1 (.ci/run), where a missing browser fails them.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core';
import type { SessionView } from '../../src/dashboard/contract.js';
import { BUILT_MAIN, callWithKey, cleanEnv, runCli, spawnServe, type Served } from './cli.js';
import { startDnsServer, TRUST_ANCHOR_ENV, withTrustAnchor, type FakeDnsServer } from './dns-server.js';

export const CHROMIUM = '/usr/bin/chromium';
const WEB_INDEX = fileURLToPath(new URL('../../dist/web/index.html', import.meta.url));

/** The password every member of these tests sets (the dashboard wants 10 characters at least). */
export const PASSWORD = 'correct horse battery staple';
/** Test keys and test-mode lists get fixed results by domain (src/services/verify/test-mode.ts). */
export const TEST_DOMAIN = 'example.com';
/** Unknown to the in-process DNS server: NXDOMAIN, so a live verification is `undeliverable`. */
export const NXDOMAIN = 'no-such-domain.test';

const required = process.env.MAILVERDICT_E2E_REQUIRED === '1';
const present = existsSync(CHROMIUM);

/**
 * Whether the e2e suites skip: no Chromium, and not required. The reason is printed once per
 * `vitest run` (the workers share the run id vitest.config.ts sets), not once per file.
 */
export const skipE2e = !present && !required;
if (skipE2e) {
  const marker = join(tmpdir(), `mailverdict-e2e-skip-${process.env.MAILVERDICT_TEST_RUN_ID ?? process.pid}`);
  try {
    writeFileSync(marker, '', { flag: 'wx' });
    console.warn(`e2e: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  } catch {
    // Another file of this run said it already.
  }
}

/** The build the e2e tests run: `npm test` makes it before vitest; alone, `npm run build` does. */
function requireBuild(): void {
  const missing = [BUILT_MAIN, WEB_INDEX].filter((file) => !existsSync(file));
  if (missing.length > 0)
    throw new Error(
      `e2e: ${missing.join(' and ')} missing: run \`npm run build\` first (the end-to-end tests drive the built app)`,
    );
}

export interface Dashboard {
  /** `http://127.0.0.1:PORT`, where the pages and both APIs are. */
  url: string;
  dataDir: string;
  dns: FakeDnsServer;
  /** The bootstrap account and its keys, as `serve` wrote them to bootstrap-keys.json. */
  accountId: string;
  liveKey: string;
  testKey: string;
  ownerEmail: string;
  /** The owner's one-time invitation link, as printed (its origin is the configured base URL). */
  ownerInvitationLink: string;
  /** The owner's invitation on this server: `${url}/accept-invite#<token>`. */
  ownerInvitation: string;
  /** Runs the operator's CLI on this store with `--json`; its parsed output. */
  cli<T = unknown>(...args: string[]): Promise<T>;
  /** What serve wrote to stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `serve` on a brand-new data directory; resolves once it listens. */
export async function startDashboard(settings: Record<string, string> = {}): Promise<Dashboard> {
  requireBuild();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-e2e-'));
  // Truthful about the trust anchor: the service trusts it, and unknown names are real NXDOMAIN.
  const dns = withTrustAnchor(await startDnsServer());
  const cleanUp = async () => {
    await dns.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let serve: Served;
  try {
    serve = await spawnServe(
      [
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--dns-server',
        dns.address,
        '--allow-internal-targets',
      ],
      {
        built: true,
        // The suites (and the screenshots) show a customer's dashboard, with a quota to gauge: the
        // `free` plan, not the operator's own `unlimited` of a real first start.
        env: cleanEnv({
          MAILVERDICT_LOG_LEVEL: 'warn',
          MAILVERDICT_BOOTSTRAP_PLAN: 'free',
          ...TRUST_ANCHOR_ENV,
          ...settings,
        }),
        withinMs: 30_000,
      },
    );
  } catch (error) {
    await cleanUp();
    throw error;
  }
  const keys = serve.keys;
  if (keys === undefined) throw new Error('serve did not write bootstrap-keys.json');
  const token = keys.owner_invitation_link.split('#')[1] ?? '';
  return {
    url: serve.url,
    dataDir,
    dns,
    accountId: keys.account_id,
    liveKey: keys.live_key,
    testKey: keys.test_key,
    ownerEmail: keys.owner_email,
    ownerInvitationLink: keys.owner_invitation_link,
    ownerInvitation: `${serve.url}/accept-invite#${token}`,
    async cli<T>(...args: string[]): Promise<T> {
      const res = await runCli(
        [...args, '--data-dir', dataDir, '--json'],
        cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn' }),
        {
          built: true,
        },
      );
      if (res.code !== 0)
        throw new Error(`mailverdict ${args.join(' ')} exited with ${res.code}: ${res.stderr}`);
      return JSON.parse(res.stdout) as T;
    },
    stderr: () => serve.stderr(),
    async stop() {
      await serve.stop();
      await cleanUp();
    },
  };
}

/** A one-time link's token: what follows `#`. */
export function tokenOf(link: string): string {
  const token = link.split('#')[1];
  if (!token) throw new Error(`no token in ${link}`);
  return token;
}

/**
 * A member's password, set as the link's page does (POST /invitations/accept), for tests about
 * something else than getting in.
 */
export async function acceptInvitation(
  dashboard: Dashboard,
  link: string,
  password = PASSWORD,
): Promise<void> {
  const res = await fetch(`${dashboard.url}/dashboard/api/invitations/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: tokenOf(link), password }),
  });
  if (res.status !== 200) throw new Error(`accepting ${link} answered ${res.status}: ${await res.text()}`);
}

/** A new member of `accountId`, invited by the operator's CLI, with PASSWORD set. */
export async function addMember(dashboard: Dashboard, accountId: string, email: string): Promise<void> {
  const invitation = await dashboard.cli<{ link: string }>(
    'members',
    'invite',
    '--account',
    accountId,
    '--email',
    email,
    '--public-base-url',
    dashboard.url,
  );
  await acceptInvitation(dashboard, invitation.link);
}

/** The server and the browser of a suite, started side by side; neither is left running if the other fails. */
export async function startE2e(): Promise<{ dashboard: Dashboard; browser: Browser }> {
  const [dashboard, browser] = await Promise.allSettled([startDashboard(), launchChromium()]);
  if (dashboard.status === 'fulfilled' && browser.status === 'fulfilled')
    return { dashboard: dashboard.value, browser: browser.value };
  if (dashboard.status === 'fulfilled') await dashboard.value.stop();
  if (browser.status === 'fulfilled') await browser.value.close();
  throw dashboard.status === 'rejected' ? dashboard.reason : (browser as PromiseRejectedResult).reason;
}

export function launchChromium(): Promise<Browser> {
  if (!present)
    throw new Error(
      `e2e: no Chromium at ${CHROMIUM}, and MAILVERDICT_E2E_REQUIRED=1 makes these tests mandatory (apt-get install chromium)`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** A fresh browser profile (cookies, storage) on the dashboard. */
export function newContext(
  browser: Browser,
  dashboard: Dashboard,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  return browser.newContext({ baseURL: dashboard.url, viewport: { width: 1280, height: 800 }, ...options });
}

/**
 * Signs in through the dashboard's API with the context's own cookie jar (what the sign-in page
 * does), for tests about something else than signing in.
 */
export async function signIn(
  context: BrowserContext,
  email: string,
  password = PASSWORD,
): Promise<SessionView> {
  const res = await context.request.post('/dashboard/api/session', { data: { email, password } });
  if (res.status() !== 200)
    throw new Error(`sign-in of ${email} answered ${res.status()}: ${await res.text()}`);
  return (await res.json()) as SessionView;
}

export interface PageResponse {
  status: number;
  body: string;
}

/**
 * A request made by the page's own JavaScript (same origin, its cookie), as the app would make
 * it; `csrf` adds the session's token.
 */
export function pageFetch(
  page: Page,
  path: string,
  init: { method?: string; body?: unknown; csrf?: string } = {},
): Promise<PageResponse> {
  return page.evaluate(
    async ({ path, method, body, csrf }) => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (csrf !== undefined) headers['x-csrf-token'] = csrf;
      const res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
      });
      return { status: res.status, body: await res.text() };
    },
    { path, method: init.method ?? 'GET', body: init.body, csrf: init.csrf },
  );
}

/** A v1 API call with a key, retried after a 429 (the bootstrap account's plan allows 5 a second). */
export function callApi(url: string, key: string, init: RequestInit = {}): Promise<Response> {
  return callWithKey(url, key, init, 10);
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is. axe is evaluated through the
 * DevTools protocol, which the page's CSP (no inline script) does not govern, unlike a script tag.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if ((await page.evaluate('typeof axe')) === 'undefined') await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    // Violations only: collecting every pass's details doubles axe's time on a busy machine.
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Moves the app to `path` as its own links do (history.pushState, which the router follows),
 * without loading the page again: quicker than `page.goto`, and what the member's clicks do.
 */
export async function navigateInApp(page: Page, path: string): Promise<void> {
  await page.evaluate((to) => {
    const w = globalThis as unknown as {
      history: { pushState(state: null, title: string, url: string): void };
      dispatchEvent(event: unknown): void;
      PopStateEvent: new (type: string) => unknown;
    };
    w.history.pushState(null, '', to);
    w.dispatchEvent(new w.PopStateEvent('popstate'));
  }, path);
}

/** Violations in words, for a failing assertion's message. */
export function describeViolations(where: string, violations: AxeViolation[]): string {
  return violations
    .map(
      (v) =>
        `${where}: [${v.impact}] ${v.id}: ${v.help}\n` +
        v.nodes.map((n) => `    ${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`).join('\n'),
    )
    .join('\n');
}
