/**
 * `npm run screenshots`: pictures of every dashboard page at desktop (1280×800) and phone
 * (390×844) width, into docs/screenshots/ (the README shows the overview).
 *
 * It runs what the end-to-end tests run (test/kit/e2e.ts): the built `serve` on a throwaway data
 * directory, an in-process DNS server (so live verifications never leave the machine: unknown
 * domains answer NXDOMAIN), Debian's Chromium. The account is filled the way a person would fill
 * it, through the dashboard's API and the v1 API: keys (one revoked), a member and an invitation,
 * a finished test list and a live one, live verifications, a list on a schedule with one run, and
 * an operator (`mailverdict operators add`, two factors turned on) for the operator console.
 * Written straight into the store, because no API can go back in time: the previous billing
 * period's daily counts, and the scheduled list's next run moved into the past (with a few
 * verdicts of its kept baseline changed, so that the run finds changes to show).
 *
 * Needs `npm run build` first.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import pino from 'pino';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import type { CreatedKey, Overview, SessionView, TwoFactorEnrolment } from '../src/dashboard/contract.js';
import { createScheduler } from '../src/jobs/scheduler.js';
import { totpCode } from '../src/services/people/two-factor.service.js';
import { openDatabase } from '../src/store/db.js';
import { addDayUsage } from '../src/store/usage-day.store.js';
import {
  NXDOMAIN,
  TEST_DOMAIN,
  acceptInvitation,
  addMember,
  callApi,
  newContext,
  launchChromium,
  signIn,
  startDashboard,
  tokenOf,
  PASSWORD,
  type Dashboard,
} from '../test/kit/e2e.js';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

interface Shot {
  name: string;
  path: string;
  /** Waits for the page's content (and opens what the picture shows). */
  ready(page: Page): Promise<void>;
  /** Signed out (the sign-in page). */
  visitor?: boolean;
  /** The operator's session (the operator console). */
  operator?: boolean;
}

async function post<T>(
  context: BrowserContext,
  session: SessionView,
  path: string,
  data: unknown,
  method: 'POST' | 'PUT' = 'POST',
): Promise<T> {
  const res = await context.request.fetch(`/dashboard/api${path}`, {
    method,
    headers: { 'x-csrf-token': session.csrf_token },
    data,
  });
  if (!res.ok()) throw new Error(`${method} ${path}: ${res.status()} ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * The list re-verified every 30 days, with one run made: the run comes due at once (its time moved
 * into the past in the store), a scheduler on the same store makes it, serve verifies it, and the
 * scheduler compares it. The kept baseline says a few addresses were found otherwise before.
 */
async function scheduleWithRun(
  dashboard: Dashboard,
  context: BrowserContext,
  session: SessionView,
  jobId: string,
): Promise<void> {
  await post(context, session, `/jobs/${jobId}/schedule`, { every_days: 30 }, 'PUT');
  const config = loadConfig({ dataDir: dashboard.dataDir }, {});
  const db = openDatabase(config);
  const scheduler = createScheduler({ db, clock: systemClock, config, logger: pino({ level: 'silent' }) });
  try {
    const kept = await db.selectFrom('list_schedule_rows').select(['seq', 'statuses']).execute();
    for (const row of kept) {
      const statuses = JSON.parse(row.statuses) as string[];
      const changed = statuses.map((status, i) =>
        i % 23 === 4 ? 'undeliverable' : i % 31 === 7 ? 'deliverable' : status,
      );
      await db
        .updateTable('list_schedule_rows')
        .set({ statuses: JSON.stringify(changed) })
        .where('seq', '=', row.seq)
        .execute();
    }
    await db
      .updateTable('list_schedules')
      .set({ next_run_at: new Date(Date.now() - 1000).toISOString() })
      .execute();
    await scheduler.runOnce();
    for (let i = 0; i < 300; i++) {
      await scheduler.runOnce();
      const run = await db
        .selectFrom('list_runs')
        .select('compared_at')
        .where('job_id', 'is not', null)
        .executeTakeFirst();
      if (run?.compared_at) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('the scheduled run was not compared within a minute');
  } finally {
    await scheduler.stop();
    await db.destroy();
  }
}

/**
 * An operator, as `mailverdict operators add` makes one: the link sets the password, then two
 * factors are turned on (operators must have them). The context keeps the signed-in session.
 */
async function operatorSignedIn(dashboard: Dashboard, context: BrowserContext): Promise<void> {
  const added = await dashboard.cli<{ link: string }>(
    'operators',
    'add',
    '--email',
    'ops@example.org',
    '--public-base-url',
    dashboard.url,
  );
  const set = await context.request.post('/dashboard/api/password-resets/accept', {
    data: { token: tokenOf(added.link), password: PASSWORD },
  });
  if (!set.ok()) throw new Error(`the operator's link: ${set.status()} ${await set.text()}`);
  const session = (await set.json()) as SessionView;
  const { secret } = await post<TwoFactorEnrolment>(
    context,
    session,
    '/account/two-factor/enrolment',
    undefined,
  );
  await post(context, session, '/account/two-factor/enrolment/confirm', {
    code: totpCode(secret, new Date()),
    password: PASSWORD,
  });
}

async function uploadList(
  context: BrowserContext,
  session: SessionView,
  name: string,
  mode: 'live' | 'test',
  csv: string,
): Promise<string> {
  const res = await context.request.post(
    `/dashboard/api/lists?name=${encodeURIComponent(name)}&email_column=2&header=true&mode=${mode}`,
    { headers: { 'content-type': 'text/csv', 'x-csrf-token': session.csrf_token }, data: csv },
  );
  if (res.status() !== 202) throw new Error(`upload of ${name}: ${res.status()} ${await res.text()}`);
  const jobId = ((await res.json()) as { job_id: string }).job_id;
  for (let i = 0; i < 300; i++) {
    const detail = (await (await context.request.get(`/dashboard/api/jobs/${jobId}`)).json()) as {
      job: { status: string };
    };
    if (detail.job.status === 'completed') return jobId;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the list ${name} did not complete within a minute`);
}

function contacts(rows: number, domains: string[]): string {
  const lines = ['id,first_name,email,company'];
  const names = ['Ada', 'Bo', 'Cleo', 'Dev', 'Eli', 'Fay', 'Gus', 'Hana', 'Ivo', 'Jun'];
  for (let i = 0; i < rows; i++) {
    const first = names[i % names.length]!;
    lines.push(
      `${100 + i},${first},${first.toLowerCase()}.${i}@${domains[i % domains.length]},Company ${i % 17}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The account as a person would have it after a few weeks. */
async function seed(dashboard: Dashboard, context: BrowserContext): Promise<{ jobId: string }> {
  await acceptInvitation(dashboard, dashboard.ownerInvitationLink);
  await addMember(dashboard, dashboard.accountId, 'sam@example.org');
  await dashboard.cli('members', 'invite', '--account', dashboard.accountId, '--email', 'lee@example.org');
  const session = await signIn(context, dashboard.ownerEmail);

  await post(context, session, '/keys', { name: 'signup form', kind: 'live', scopes: ['verify'] });
  await post(context, session, '/keys', { name: 'CRM import', kind: 'live', scopes: ['verify', 'batch'] });
  const old = await post<CreatedKey>(context, session, '/keys', {
    name: 'old integration',
    kind: 'test',
    scopes: ['verify'],
  });
  await post(context, session, `/keys/${old.key.id}/revoke`, undefined);

  // A live list (its domains do not exist: undeliverable, counted as batch usage) and a test list.
  await uploadList(
    context,
    session,
    'trade fair leads',
    'live',
    contacts(24, [NXDOMAIN, `gone.${NXDOMAIN}`]),
  );
  const jobId = await uploadList(
    context,
    session,
    'newsletter subscribers',
    'test',
    contacts(400, [
      `valid.${TEST_DOMAIN}`,
      `valid.${TEST_DOMAIN}`,
      `valid.${TEST_DOMAIN}`,
      `invalid.${TEST_DOMAIN}`,
      `disposable.${TEST_DOMAIN}`,
      'mail.elsewhere.test',
      'gmial.com',
    ]),
  );
  await scheduleWithRun(dashboard, context, session, jobId);
  for (let i = 0; i < 9; i++) {
    const res = await callApi(`${dashboard.url}/v1/verify`, dashboard.liveKey, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `visitor${i}@${NXDOMAIN}` }),
    });
    await res.arrayBuffer();
  }
  // Bounces reported after those verifications (the Outcomes page's intake and accuracy report).
  const at = new Date(Date.now() + 1000).toISOString();
  const bounces = [
    'email,type,at',
    // Six of the trade fair's contacts at the domain (contacts(): first name, row, domain by row).
    ...[0, 2, 4, 6, 8, 10].map(
      (i) => `${['ada', 'cleo', 'eli', 'gus', 'ivo'][(i % 10) / 2]}.${i}@${NXDOMAIN},hard_bounce,${at}`,
    ),
    ...[0, 1, 2].map((i) => `visitor${i}@${NXDOMAIN},hard_bounce,${at}`),
    `visitor3@${NXDOMAIN},soft_bounce,${at}`,
  ].join('\n');
  const uploaded = await context.request.post('/dashboard/api/outcomes/upload', {
    headers: { 'content-type': 'text/csv', 'x-csrf-token': session.csrf_token },
    data: bounces,
  });
  if (!uploaded.ok()) throw new Error(`outcomes upload: ${uploaded.status()} ${await uploaded.text()}`);

  const overview = (await (await context.request.get('/dashboard/api/overview')).json()) as Overview;
  const db = openDatabase({ dataDir: dashboard.dataDir });
  try {
    for (const [i, day] of overview.daily.previous.entries()) {
      const single = 4 + ((i * 7) % 11);
      await addDayUsage(db, {
        accountId: dashboard.accountId,
        day: day.date,
        source: 'single',
        count: single,
      });
      if (i % 5 === 2)
        await addDayUsage(db, {
          accountId: dashboard.accountId,
          day: day.date,
          source: 'batch',
          count: 20 + i,
        });
    }
  } finally {
    await db.destroy();
  }
  return { jobId };
}

function shots(jobId: string): Shot[] {
  const h1 = (name: string) => async (page: Page) => {
    await page.getByRole('heading', { name, level: 1 }).waitFor();
  };
  return [
    { name: 'sign-in', path: '/sign-in', ready: h1('Sign in'), visitor: true },
    {
      name: 'overview',
      path: '/',
      ready: async (page) => {
        await page.getByRole('meter', { name: 'Quota used' }).waitFor();
        await page.locator('.chart-canvas canvas').first().waitFor();
      },
    },
    {
      name: 'keys',
      path: '/keys',
      ready: async (page) => page.getByRole('table', { name: 'API keys' }).waitFor(),
    },
    {
      name: 'lists',
      path: '/lists',
      ready: async (page) => page.getByRole('table', { name: 'Your lists' }).waitFor(),
    },
    {
      name: 'list',
      path: `/lists/${jobId}`,
      ready: async (page) => {
        await page.getByRole('figure', { name: 'By verdict' }).waitFor();
        // The "safe to send" preset chosen, the suggested addresses beside the originals.
        await page.getByRole('button', { name: 'Deliverable and risky' }).click();
        await page.getByRole('radio', { name: 'Beside the address' }).check();
      },
    },
    {
      name: 'list-history',
      path: `/lists/${jobId}`,
      ready: async (page) => {
        await page.getByRole('table', { name: /^History of / }).waitFor();
        await page.getByRole('table', { name: /^History of / }).scrollIntoViewIfNeeded();
      },
    },
    {
      name: 'operator',
      path: '/operator',
      operator: true,
      ready: async (page) => {
        await page.getByRole('table', { name: 'Accounts' }).waitFor();
        await page.getByRole('heading', { name: 'Service health' }).waitFor();
      },
    },
    {
      name: 'verify',
      path: '/verify',
      ready: async (page) => {
        // A typo of a free provider: the page suggests the right domain (the DNS answers NXDOMAIN).
        await page.getByLabel('E-mail address').fill('anna@gmial.com');
        await page.getByRole('button', { name: 'Verify' }).click();
        await page.getByRole('list', { name: 'Checks' }).waitFor();
      },
    },
    {
      name: 'outcomes',
      path: '/outcomes',
      ready: async (page) => {
        await page.getByRole('table', { name: 'By source' }).waitFor();
        await page.getByRole('img', { name: /Reliability diagram/ }).waitFor();
      },
    },
    {
      name: 'settings',
      path: '/settings',
      ready: async (page) => page.getByRole('table', { name: 'Members' }).waitFor(),
    },
    {
      name: 'security-log',
      path: '/settings/security-log',
      ready: async (page) => page.getByRole('table', { name: 'Security log' }).waitFor(),
    },
  ];
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  // A small quota with overage on, so the overview shows the overage and its cost so far.
  const plans = { free: { monthly_quota: 30, overage_enabled: true, overage_rate_per_verification: 0.004 } };
  const dashboard = await startDashboard({ MAILVERDICT_PLANS: JSON.stringify(plans) });
  const browser = await launchChromium().catch(async (error: unknown) => {
    await dashboard.stop();
    throw error;
  });
  try {
    const seeding = await newContext(browser, dashboard);
    const { jobId } = await seed(dashboard, seeding);
    await seeding.close();
    const operatorSeed = await newContext(browser, dashboard);
    await operatorSignedIn(dashboard, operatorSeed);
    const operatorState = await operatorSeed.storageState();
    await operatorSeed.close();
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      const visitor = await newContext(browser, dashboard, { viewport, colorScheme: 'light' });
      const member = await newContext(browser, dashboard, { viewport, colorScheme: 'light' });
      await signIn(member, dashboard.ownerEmail);
      const operator = await newContext(browser, dashboard, {
        viewport,
        colorScheme: 'light',
        storageState: operatorState,
      });
      for (const shot of shots(jobId)) {
        const page = await (shot.visitor ? visitor : shot.operator ? operator : member).newPage();
        await page.goto(shot.path);
        await shot.ready(page);
        await page.waitForLoadState('networkidle');
        // The whole page in a window as tall as it: the sidebar (sticky, 100vh) is drawn whole and
        // its column (painted by .shell) runs to the page's foot, as on screen while scrolling.
        const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
        await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
        await page.waitForLoadState('networkidle');
        const file = join(OUT, `${shot.name}-${size}.png`);
        await page.screenshot({ path: file, animations: 'disabled' });
        console.log(`wrote ${file}`);
        await page.close();
      }
      await visitor.close();
      await member.close();
      await operator.close();
    }
  } finally {
    await browser.close();
    await dashboard.stop();
  }
}

await main();
