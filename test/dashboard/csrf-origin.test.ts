/**
 * Issue 26, item 10: the cross-site guard's own origin is the configured public base URL (or,
 * without one, the address and port the connection reached), never the request's `Host`, which
 * the client writes: a forged `Host` with a matching `Origin` (what DNS rebinding sends from a
 * browser) is refused. Through a listening server, with raw `Host` headers.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDashboardHarness, type DashboardHarness } from '../kit/dashboard-kit.js';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function listening(flags: Record<string, string> = {}): Promise<number> {
  // No sign-in rate limit: the test sends a dozen password-reset requests from one address.
  h = await createDashboardHarness({ flags: { signInRateLimit: '0', ...flags } });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return (h.app.server.address() as AddressInfo).port;
}

/**
 * A password-reset request (a state-changing public route that costs no password hash), with the
 * given Host and Origin; its status and error code.
 */
function resetRequest(port: number, host: string, origin: string): Promise<[number, string | null]> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify({ email: 'someone@example.org' });
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/dashboard/api/password-resets',
        headers: {
          host,
          origin,
          'sec-fetch-site': 'same-origin',
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve([res.statusCode!, text === '' ? null : (JSON.parse(text) as { error: string }).error]),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the dashboard’s own origin', () => {
  it('is never taken from Host: a forged Host with a matching Origin is refused', async () => {
    const port = await listening();
    expect(await resetRequest(port, `evil.example:${port}`, `http://evil.example:${port}`)).toEqual([
      403,
      'csrf_rejected',
    ]);
    expect(await resetRequest(port, 'evil.example', 'http://evil.example')).toEqual([403, 'csrf_rejected']);
  });

  it('without --public-base-url, is the address and port the connection reached, with the loopback names', async () => {
    const port = await listening();
    // Whatever Host says: the origin is checked against the socket, not the header.
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`])
      expect([origin, ...(await resetRequest(port, 'evil.example', origin))]).toEqual([origin, 202, null]);
    expect(await resetRequest(port, `127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`)).toEqual([
      403,
      'csrf_rejected',
    ]);
  });

  it('with --public-base-url, is that origin only, even for a request whose Host names the listener', async () => {
    const port = await listening({ publicBaseUrl: 'https://verify.example.net' });
    expect(await resetRequest(port, 'anything.example', 'https://verify.example.net')).toEqual([202, null]);
    expect(await resetRequest(port, `127.0.0.1:${port}`, `http://127.0.0.1:${port}`)).toEqual([
      403,
      'csrf_rejected',
    ]);
    expect(await resetRequest(port, 'evil.example', 'http://evil.example')).toEqual([403, 'csrf_rejected']);
  });
});
