/**
 * The operator console end to end (docs/operators.md): an operator suspends an account in the
 * page, its key gets 403 account_suspended through the real v1 API, its member sees the banner
 * with the reason, and resuming restores both. Real Chromium, real sockets, the built app.
 *
 * The operator is a real one, made as `mailverdict operators add` makes one: their link sets the
 * password, and they turn on the second factor operators must have before the console opens.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { BackgroundJobs } from '../../src/jobs/embedded.js';
import { buildHttpApp, createRuntime, startEmbeddedWorkers, type Runtime } from '../../src/runtime.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { acceptLink, issueInvitation } from '../../src/services/people/members.service.js';
import { addOperator } from '../../src/services/operators/operators.service.js';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import { CSRF_HEADER, type SessionView, type TwoFactorEnrolment } from '../../src/dashboard/contract.js';
import {
  startDnsServer,
  TRUST_ANCHOR_FLAGS,
  withTrustAnchor,
  type FakeDnsServer,
} from '../kit/dns-server.js';
import { PASSWORD, launchChromium, seriousViolations, skipE2e } from '../kit/e2e.js';

const WEB_DIR = fileURLToPath(new URL('../../dist/web', import.meta.url));
const OPERATOR = 'ops@operator.example';
const OWNER = 'owner@customer.example';

describe.skipIf(skipE2e)('dashboard end to end: the operator console', { timeout: 60_000 }, () => {
  let dir: string;
  let dns: FakeDnsServer;
  let runtime: Runtime;
  let app: FastifyInstance;
  let background: BackgroundJobs | undefined;
  let url: string;
  let browser: Browser;
  let accountId: string;
  let testKey: string;
  const contexts: BrowserContext[] = [];

  async function member(accountIdOf: string, email: string) {
    const { db, clock } = runtime.ctx;
    const issued = await issueInvitation(db, clock, { accountId: accountIdOf, email, role: 'owner' });
    await acceptLink(db, clock, { token: issued.token, password: PASSWORD, kind: 'invitation' });
  }

  async function signedIn(email: string) {
    const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const res = await context.request.post('/dashboard/api/session', { data: { email, password: PASSWORD } });
    expect(res.status()).toBe(200);
    return context.newPage();
  }

  /** The operator's first visit: the link sets the password, then the second factor is turned on. */
  async function operatorSignedIn() {
    const { db, clock, config } = runtime.ctx;
    const silent = { warn: () => undefined, info: () => undefined };
    const added = await addOperator({ db, clock, config, mailer: null, logger: silent }, OPERATOR);
    const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const set = await context.request.post('/dashboard/api/password-resets/accept', {
      data: { token: added.link!.token, password: PASSWORD },
    });
    expect(set.status()).toBe(200);
    const view = (await (await context.request.get('/dashboard/api/session')).json()) as SessionView;
    const headers = { [CSRF_HEADER]: view.csrf_token };
    const started = await context.request.post('/dashboard/api/account/two-factor/enrolment', { headers });
    const { secret } = (await started.json()) as TwoFactorEnrolment;
    const confirmed = await context.request.post('/dashboard/api/account/two-factor/enrolment/confirm', {
      headers,
      data: { code: totpCode(secret, new Date()), password: PASSWORD },
    });
    expect(confirmed.status()).toBe(200);
    return context.newPage();
  }

  const verify = () =>
    fetch(`${url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'someone@valid.example.com' }),
    });

  beforeAll(async () => {
    if (!existsSync(join(WEB_DIR, 'index.html')))
      throw new Error(
        `e2e: ${WEB_DIR} missing: run \`npm run build\` first (the end-to-end tests drive the built app)`,
      );
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-e2e-operator-'));
    dns = withTrustAnchor(await startDnsServer());
    const config = loadConfig(
      {
        dataDir: dir,
        host: '127.0.0.1',
        port: '0',
        dnsServer: dns.address,
        ...TRUST_ANCHOR_FLAGS,
        allowInternalTargets: 'true',
      },
      {},
    );
    runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) });
    const { db, clock } = runtime.ctx;
    const customer = await createAccount(db, clock, { email: OWNER, plan: 'starter' });
    accountId = customer.id;
    testKey = (await createKey(db, clock, { accountId, kind: 'test' })).key;
    await member(accountId, OWNER);
    // Embedded workers as `serve` runs them: the health panel lists them.
    background = startEmbeddedWorkers(runtime.ctx);
    app = buildHttpApp({ ...runtime.ctx, webDir: WEB_DIR });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    browser = await launchChromium();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await background?.stop();
    await runtime?.close();
    await dns?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the operator suspends an account: its key gets 403 account_suspended, its member sees why; resuming restores it', async () => {
    expect((await verify()).status).toBe(200);

    const ops = await operatorSignedIn();
    await ops.goto('/operator');
    const table = ops.getByRole('table', { name: 'Accounts' });
    await table.waitFor();
    const row = table.getByRole('row').filter({ hasText: OWNER });
    await row.getByText('Active').waitFor();
    await ops.getByRole('heading', { name: 'Service health' }).waitFor();
    await ops.getByText(/chunks pending/).waitFor();
    // The process's embedded workers, idle: live in the health panel with their heartbeat.
    const workers = ops.getByRole('table', { name: 'Workers' });
    await workers.getByRole('row').filter({ hasText: 'Embedded (serve)' }).getByText('Idle').waitFor();
    expect(await seriousViolations(ops)).toEqual([]);
    await ops.getByRole('button', { name: `Suspend ${OWNER}` }).click();
    const dialog = ops.getByRole('alertdialog', { name: `Suspend ${OWNER}?` });
    await dialog.getByLabel('Reason').fill('unpaid invoice');
    await dialog.getByRole('button', { name: 'Suspend account' }).click();
    await row.getByText('Suspended').waitFor();

    const refused = await verify();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'account_suspended' });

    const owner = await signedIn(OWNER);
    await owner.goto('/');
    const banner = owner.getByRole('alert').filter({ hasText: 'This account is suspended' });
    await banner.waitFor();
    expect(await banner.textContent()).toContain('This account is suspended: unpaid invoice.');
    // A member is not an operator: the console is not there for them.
    await owner.goto('/operator');
    await owner.getByRole('heading', { name: 'Page not found' }).waitFor();

    await ops.getByRole('button', { name: `Resume ${OWNER}` }).click();
    await row.getByText('Active').waitFor();
    expect((await verify()).status).toBe(200);
    await owner.goto('/');
    await owner.getByRole('heading', { name: 'Overview' }).waitFor();
    await owner.getByRole('heading', { name: 'Latest lists' }).waitFor();
    expect(await owner.getByText('This account is suspended').count()).toBe(0);
  });
});
