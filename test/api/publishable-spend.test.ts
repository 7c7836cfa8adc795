/**
 * Issue 26, item 3 and the suspended preflight: a publishable key is a public token, so what it
 * can spend follows the account's quota. A key without a cap of its own stops at
 * `--publishable-daily-share` (2 %) of the monthly quota a day; the request that reaches a cap
 * tells the owner (the security log, an e-mail through the relay, the overview's notice); the keys
 * page shows what one day at the cap costs and warns when 30 of them exceed the quota. A suspended
 * account's origins get no CORS preflight, as a revoked key's. Through a listening server;
 * `MAILVERDICT_TEST_STORE=postgres` reruns it on PostgreSQL.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditPage, CreatedKey, KeyList, Overview } from '../../src/dashboard/contract.js';
import {
  CLI_OPERATOR,
  changeOperatorAccount,
} from '../../src/services/operators/operator-accounts.service.js';
import { createKey, revokeKey } from '../../src/services/keys/keys.service.js';
import { plansFromConfig } from '../../src/services/usage/plans.js';
import { defaultDailyCap, dailyCapCost } from '../../src/services/keys/publishable-keys.js';
import { API, createDashboardHarness, type DashboardHarness } from '../kit/dashboard-kit.js';
import { startMailSink, type MailSink } from '../kit/mail-sink.js';
import { waitFor } from '../kit/wait-for.js';

const SHOP = 'https://shop.example';
/** Sign-ins hash passwords with scrypt (seconds on a loaded 2-core machine). */
const SLOW = { timeout: 90_000 };

let h: DashboardHarness | undefined;
let sink: MailSink | undefined;
afterEach(async () => {
  await h?.close();
  await sink?.close();
  h = undefined;
  sink = undefined;
});

async function listening(
  options: Parameters<typeof createDashboardHarness>[0] = {},
): Promise<{ d: DashboardHarness; port: number }> {
  const d = await createDashboardHarness(options);
  h = d;
  await d.app.listen({ host: '127.0.0.1', port: 0 });
  return { d, port: (d.app.server.address() as AddressInfo).port };
}

/** One request to the listening server; its status. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return new Promise<number>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...headers,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** `n` verifications with a publishable key from the page's origin; their statuses in order. */
async function verifications(port: number, key: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++)
    statuses.push(
      await send(
        port,
        'POST',
        '/v1/verify',
        { authorization: `Bearer ${key}`, origin: SHOP },
        {
          email: 'anna@valid.example.com',
        },
      ),
    );
  return statuses;
}

/** A publishable key of the harness's account with no daily cap of its own, limits out of the way. */
async function widgetKey(d: DashboardHarness, dailyCap: number | null = null) {
  return createKey(d.runtime.ctx.db, d.clock, {
    accountId: d.accountId,
    kind: 'test',
    name: 'signup form',
    publishable: { allowedOrigins: [SHOP], visitorRateLimit: 1000, keyRateLimit: 1000, dailyCap },
  });
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('a publishable key’s daily cap follows the account’s quota', SLOW, () => {
  it('stops a key without a cap of its own at 2 % of the free plan’s 1,000 a month: 20 a day, not the month', async () => {
    const { d, port } = await listening();
    const { key } = await widgetKey(d);
    const statuses = await verifications(port, key, 25);
    expect([count(statuses, 200), count(statuses, 429)]).toEqual([20, 5]);
  });

  it('takes the account’s own quota, and --publishable-daily-share, into the default', async () => {
    const { d, port } = await listening({
      account: { quotaLimit: 500 },
      flags: { publishableDailyShare: '5' },
    });
    const { key } = await widgetKey(d);
    const statuses = await verifications(port, key, 30);
    // 5 % of 500.
    expect([count(statuses, 200), count(statuses, 429)]).toEqual([25, 5]);
  });

  it('keeps a key’s own cap', async () => {
    const { d, port } = await listening();
    const { key } = await widgetKey(d, 3);
    expect(await verifications(port, key, 5)).toEqual([200, 200, 200, 429, 429]);
  });

  it('gives an account without a quota the server’s fixed cap (--publishable-daily-cap)', () => {
    const defaults = { visitorRateLimit: 2, keyRateLimit: 20, dailyCap: 1000, dailySharePercent: 2 };
    expect(defaultDailyCap(defaults, null)).toBe(1000);
    expect(defaultDailyCap(defaults, Number.POSITIVE_INFINITY)).toBe(1000);
    expect(defaultDailyCap(defaults, 1000)).toBe(20);
    expect(defaultDailyCap(defaults, 10)).toBe(1);
    expect(dailyCapCost(null, defaults, null)).toMatchObject({
      daily_cap: 1000,
      monthly_quota: null,
      day_percent_of_quota: null,
      month_exceeds_quota: false,
      warning: null,
    });
  });
});

describe('the owner is told when a publishable key reaches its cap', SLOW, () => {
  it('once, in the security log, by e-mail through the relay, and on the overview', async () => {
    sink = await startMailSink();
    const { d, port } = await listening({ flags: { smtpRelayUrl: sink.url } });
    const { browser } = await d.signedIn();
    const { key, record } = await widgetKey(d, 4);
    const quiet = (await browser.get(`${API}/overview`)).json<Overview>();
    expect(quiet.cap_notices).toEqual([]);

    expect(await verifications(port, key, 6)).toEqual([200, 200, 200, 200, 429, 429]);
    const mail = await waitFor('the cap e-mail', async () => sink!.messages[0], 20_000);
    expect(mail.to).toEqual(['owner@example.org']);
    expect(mail.text).toContain('reached its daily cap of 4 verifications');
    // The key's prefix and last four characters (the ellipsis between them is encoded in the mail).
    expect(mail.text).toContain(record.display.split('…')[0]);
    expect(mail.text).toContain(record.last4);
    expect(mail.text).not.toContain(key);

    const log = await waitFor(
      'the security log entry',
      async () => {
        const page = (await browser.get(`${API}/audit`)).json<AuditPage>();
        return page.entries.some((e) => e.type === 'publishable_cap_reached') ? page : undefined;
      },
      20_000,
    );
    expect(log.entries.filter((e) => e.type === 'publishable_cap_reached')).toMatchObject([
      { actor: { kind: 'system' }, details: { key_id: record.id, daily_cap: 4, day: '2026-03-10' } },
    ]);
    const overview = (await browser.get(`${API}/overview`)).json<Overview>();
    expect(overview.cap_notices).toEqual([
      { key_id: record.id, name: 'signup form', display: record.display, daily_cap: 4, day: '2026-03-10' },
    ]);
    // Refused requests past the cap tell nobody again: one e-mail, one entry.
    expect(sink.messages).toHaveLength(1);

    // The next UTC day (12:00 to 00:01, in two steps that keep the session alive) the notice is gone.
    d.manualClock.advance(6 * 3600 * 1000);
    expect((await browser.get(`${API}/overview`)).json<Overview>().cap_notices).toHaveLength(1);
    d.manualClock.advance(6 * 3600 * 1000 + 60_000);
    expect((await browser.get(`${API}/overview`)).json<Overview>().cap_notices).toEqual([]);
  });
});

describe('the keys page and the CLI say what one day at the cap costs', SLOW, () => {
  it('shows the cap in force and its share of the quota, and warns when 30 days of it exceed the quota', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const publishable = (dailyCap?: number) =>
      browser.post('keys', {
        name: 'widget',
        kind: 'live',
        scopes: ['verify'],
        publishable: { allowedOrigins: [SHOP], ...(dailyCap === undefined ? {} : { dailyCap }) },
      });
    const byDefault = (await publishable()).json<CreatedKey>();
    expect(byDefault.warning).toBeNull();
    expect(byDefault.key.cap_cost).toEqual({
      daily_cap: 20,
      default_cap: true,
      monthly_quota: 1000,
      day_percent_of_quota: 2,
      month_exceeds_quota: false,
      warning: null,
    });
    const greedy = (await publishable(1000)).json<CreatedKey>();
    expect(greedy.key.cap_cost).toMatchObject({
      daily_cap: 1000,
      default_cap: false,
      day_percent_of_quota: 100,
      month_exceeds_quota: true,
    });
    expect(greedy.warning).toMatch(
      /daily cap of 1000 .* 30 days is 30000, more than the monthly quota of 1000/,
    );
    const listed = (await browser.get(`${API}/keys`)).json<KeyList>();
    expect(listed.keys.find((k) => k.id === greedy.key.id)?.cap_cost?.month_exceeds_quota).toBe(true);
    const secret = (
      await browser.post('keys', { name: 'server', kind: 'live', scopes: ['verify'] })
    ).json<CreatedKey>();
    expect([secret.key.cap_cost, secret.warning]).toEqual([null, null]);
    await revokeKey(h.runtime.ctx.db, h.clock, greedy.key.id);
  });
});

describe('a suspended account’s publishable keys', () => {
  it('get no CORS preflight, as a revoked key’s; resumed, they get it again', async () => {
    const { d, port } = await listening();
    await widgetKey(d);
    const preflight = () =>
      send(port, 'OPTIONS', '/v1/verify', {
        origin: SHOP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      });
    expect(await preflight()).toBe(204);
    const operator = {
      db: d.runtime.ctx.db,
      clock: d.clock,
      plans: plansFromConfig(d.runtime.ctx.config),
      logger: pino({ level: 'silent' }),
    };
    await changeOperatorAccount(operator, CLI_OPERATOR, d.accountId, { suspended: true, reason: 'abuse' });
    expect(await preflight()).toBe(403);
    await changeOperatorAccount(operator, CLI_OPERATOR, d.accountId, { suspended: false });
    expect(await preflight()).toBe(204);
  });
});
