/**
 * Issue 26, item 2: behind a reverse proxy, every per-client defence counts the address the
 * proxy saw, never one the client wrote. The proxy is played by a loopback client of a listening
 * server that appends the address it saw to X-Forwarded-For, as nginx's
 * `$proxy_add_x_forwarded_for` and Caddy's `reverse_proxy` do; `--trust-proxy true`, which
 * believed the client's own left-most entry, is refused at start-up (test/config.test.ts,
 * test/cli/serve-settings.test.ts).
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditPage, SessionList, SessionView } from '../../src/dashboard/contract.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { createDashboardHarness, PASSWORD, type DashboardHarness } from '../kit/dashboard-kit.js';

/** Sign-ins hash passwords with scrypt (seconds on a loaded 2-core machine). */
const SLOW = { timeout: 90_000 };
const SHOP = 'https://shop.example';
/** The proxy in front of the server: the server sees this loopback address as the socket's peer. */
const PROXY = '127.0.0.1';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request to the listening server from the socket address `from`. */
function send(
  port: number,
  o: { from?: string; method?: string; path: string; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        localAddress: o.from ?? PROXY,
        method: o.method ?? (payload === undefined ? 'GET' : 'POST'),
        path: o.path,
        headers: {
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          ...o.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** What a proxy that appends the address it saw forwards: the client's own header, then that address. */
function forwarded(clientWrote: string | undefined, proxySaw: string): Record<string, string> {
  return { 'x-forwarded-for': clientWrote === undefined ? proxySaw : `${clientWrote}, ${proxySaw}` };
}

async function listening(flags: Record<string, string>): Promise<{ d: DashboardHarness; port: number }> {
  const d = await createDashboardHarness({ flags });
  h = d;
  await d.app.listen({ host: '127.0.0.1', port: 0 });
  return { d, port: (d.app.server.address() as AddressInfo).port };
}

const errorOf = (a: Answer): string => (JSON.parse(a.body) as { error: string }).error;

describe('behind a proxy that appends the address it saw (--trust-proxy 1)', SLOW, () => {
  it('limits a publishable key per visitor by the proxy’s entry: 2 of 6 admitted, whatever the client wrote', async () => {
    const { d, port } = await listening({ trustProxy: '1' });
    const { key } = await createKey(d.runtime.ctx.db, d.clock, {
      accountId: d.accountId,
      kind: 'test',
      publishable: { allowedOrigins: [SHOP], visitorRateLimit: 2, keyRateLimit: 100 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await send(port, {
        path: '/v1/verify',
        headers: {
          authorization: `Bearer ${key}`,
          origin: SHOP,
          ...forwarded(`198.51.100.${i + 1}`, '203.0.113.9'),
        },
        body: { email: 'anna@valid.example.com' },
      });
      statuses.push(res.status);
    }
    // The harness's rate limiter runs on its frozen clock: all six fall in one second.
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    // Another visitor behind the same proxy has an allowance of their own.
    const other = await send(port, {
      path: '/v1/verify',
      headers: { authorization: `Bearer ${key}`, origin: SHOP, ...forwarded(undefined, '203.0.113.10') },
      body: { email: 'anna@valid.example.com' },
    });
    expect(other.status).toBe(200);
  });

  it('keeps the sign-in pair lock on the attacker’s address, however they rewrite X-Forwarded-For; the owner still gets in', async () => {
    const { d, port } = await listening({ trustProxy: '1', signInRateLimit: '0', signInFailureLimit: '3' });
    await d.addMember('owner@example.org', { role: 'owner' });
    const attempt = (clientWrote: string | undefined, proxySaw: string, password: string) =>
      send(port, {
        path: '/dashboard/api/session',
        headers: { origin: d.origin, 'sec-fetch-site': 'same-origin', ...forwarded(clientWrote, proxySaw) },
        body: { email: 'owner@example.org', password },
      });
    for (let i = 0; i < 3; i++)
      expect((await attempt(`192.0.2.${i + 1}`, '203.0.113.66', 'a wrong guess')).status).toBe(401);
    // A fresh left-most entry does not make a fresh pair: the proxy's entry is the client.
    const locked = await attempt('192.0.2.200', '203.0.113.66', PASSWORD);
    expect(locked.status).toBe(429);
    expect((await attempt(undefined, '203.0.113.7', PASSWORD)).status).toBe(200);
  });

  it('refuses a client address that is not an IP address with 400 invalid_client_address, on the API and the dashboard, and logs nothing', async () => {
    // Two hops trusted behind one proxy: the client's own entry is taken, and here it is no address.
    const { d, port } = await listening({ trustProxy: '2' });
    await d.addMember('owner@example.org', { role: 'owner' });
    const written = ['<script>alert(1)</script>', 'not-an-address', '203.0.113.9:4711'];
    for (const clientWrote of written) {
      const api = await send(port, {
        path: '/v1/account/usage',
        headers: { authorization: `Bearer ${d.testKey}`, ...forwarded(clientWrote, '203.0.113.9') },
      });
      expect([clientWrote, api.status, errorOf(api)]).toEqual([clientWrote, 400, 'invalid_client_address']);
      expect(api.headers['x-request-id']).toMatch(/^req_/);
      const signIn = await send(port, {
        path: '/dashboard/api/session',
        headers: {
          origin: d.origin,
          'sec-fetch-site': 'same-origin',
          ...forwarded(clientWrote, '203.0.113.9'),
        },
        body: { email: 'owner@example.org', password: PASSWORD },
      });
      expect([clientWrote, signIn.status, errorOf(signIn)]).toEqual([
        clientWrote,
        400,
        'invalid_client_address',
      ]);
    }
    // None of these got as far as a session, so the owner's first sign-in is the log's only entry
    // beside the harness's: the owner joined through their invitation, with no request.
    const { browser } = await signedInThrough(port, d, '203.0.113.9');
    const log = JSON.parse((await browser('GET', '/dashboard/api/audit')).body) as AuditPage;
    expect(log.entries.map((e) => [e.type, e.client_ip]).sort()).toEqual([
      ['invitation_accepted', null],
      ['sign_in', '203.0.113.9'],
    ]);
  });
});

describe('behind a proxy trusted by its address (--trust-proxy 127.0.0.1)', SLOW, () => {
  it('writes the address the proxy saw in the security log and the sessions list, not the one the client wrote', async () => {
    const { d, port } = await listening({ trustProxy: PROXY });
    await d.addMember('owner@example.org', { role: 'owner' });
    const { browser } = await signedInThrough(port, d, '203.0.113.9', '10.9.8.7');
    const log = JSON.parse((await browser('GET', '/dashboard/api/audit')).body) as AuditPage;
    // The sign-in, and the harness's invitation_accepted (no request, no address).
    const signIns = log.entries.filter((e) => e.type === 'sign_in');
    expect(signIns.map((e) => e.client_ip)).toEqual(['203.0.113.9']);
    expect(log.entries.filter((e) => e.type !== 'sign_in').map((e) => [e.type, e.client_ip])).toEqual([
      ['invitation_accepted', null],
    ]);
    const sessions = JSON.parse((await browser('GET', '/dashboard/api/sessions')).body) as SessionList;
    expect(sessions.sessions.map((s) => s.client_ip)).toEqual(['203.0.113.9']);
  });

  it('counts a client that reaches the server directly by its socket address, whatever it writes', async () => {
    const { d, port } = await listening({ trustProxy: PROXY, authFailureRateLimit: '2' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await send(port, {
        from: '127.0.0.5',
        path: '/v1/account/usage',
        headers: { authorization: `Bearer svc_live_${'x'.repeat(40)}`, 'x-forwarded-for': `192.0.2.${i}` },
      });
      statuses.push(res.status);
    }
    // 127.0.0.5 is not a trusted proxy: its header counts for nothing, and it is one client.
    expect(statuses).toEqual([401, 401, 429, 429, 429]);
    expect(d.runtime.ctx.config.trustProxy).toEqual([PROXY]);
  });
});

/**
 * Signs the owner in through the proxy, the client writing `clientWrote` (if anything) and the
 * proxy appending `proxySaw`; returns a browser that keeps the session and its CSRF token.
 */
async function signedInThrough(
  port: number,
  d: DashboardHarness,
  proxySaw: string,
  clientWrote?: string,
): Promise<{ browser: (method: string, path: string) => Promise<Answer> }> {
  const headers = { origin: d.origin, 'sec-fetch-site': 'same-origin', ...forwarded(clientWrote, proxySaw) };
  const res = await send(port, {
    path: '/dashboard/api/session',
    headers,
    body: { email: 'owner@example.org', password: PASSWORD },
  });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${res.body}`);
  const view = JSON.parse(res.body) as SessionView;
  const setCookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('mv_session='))!;
  const cookie = setCookie.split(';')[0]!;
  return {
    browser: (method, path) =>
      send(port, { method, path, headers: { ...headers, cookie, 'x-csrf-token': view.csrf_token } }),
  };
}
