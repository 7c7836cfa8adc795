/**
 * Issue 7, unauthenticated traffic: failed authentications are rate limited per client address;
 * --trust-proxy decides whether X-Forwarded-For names the client; valid keys are unaffected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../kit/api-harness.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

const BAD_KEY = `svc_live_${'x'.repeat(40)}`;

async function attempt(remoteAddress: string, key = BAD_KEY, forwardedFor?: string) {
  return h.inject({
    method: 'GET',
    url: '/v1/account/usage',
    remoteAddress,
    headers: { authorization: `Bearer ${key}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  });
}

async function statuses(n: number, send: (i: number) => ReturnType<typeof attempt>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send(i)).statusCode);
  return out;
}

describe('failed authentication', () => {
  it('answers 429 with the envelope and Retry-After once an address has used its allowance', async () => {
    h = await createHarness({ flags: { authFailureRateLimit: '3' } });
    const codes = await statuses(30, () => attempt('203.0.113.7'));
    // 3 per second; the loop may straddle one second boundary, so at most 6 get through to 401.
    expect(codes.filter((c) => c === 401).length).toBeLessThanOrEqual(6);
    expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(24);
    const refused = await attempt('203.0.113.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    expect(refused.json<{ request_id: string }>().request_id).toMatch(/^req_/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('leaves other addresses and valid keys from the same address alone', async () => {
    h = await createHarness({ flags: { authFailureRateLimit: '3' } });
    await statuses(20, () => attempt('203.0.113.7'));
    expect((await attempt('203.0.113.8')).statusCode).toBe(401);
    expect((await attempt('203.0.113.7', h.testKey)).statusCode).toBe(200);
  });

  it('counts by the socket address, ignoring X-Forwarded-For, unless --trust-proxy trusts the proxy', async () => {
    h = await createHarness({ flags: { authFailureRateLimit: '3' } });
    const spoofed = await statuses(20, (i) => attempt('198.51.100.1', BAD_KEY, `192.0.2.${i}`));
    expect(spoofed.filter((c) => c === 429).length).toBeGreaterThanOrEqual(14);
    await h.close();

    h = await createHarness({ flags: { authFailureRateLimit: '3', trustProxy: '198.51.100.1' } });
    const proxied = await statuses(20, (i) => attempt('198.51.100.1', BAD_KEY, `192.0.2.${i}`));
    expect(proxied.every((c) => c === 401)).toBe(true);
  });

  it('counts an IPv6 client by its /64: other addresses of the /64 share its allowance, another /64 does not', async () => {
    h = await createHarness({ flags: { authFailureRateLimit: '3' } });
    const rotating = await statuses(20, (i) => attempt(`2001:db8:1:2::${(i + 1).toString(16)}`));
    expect(rotating.filter((c) => c === 429).length).toBeGreaterThanOrEqual(14);
    expect((await attempt('2001:db8:1:2:ffff::9')).statusCode).toBe(429);
    expect((await attempt('2001:db8:1:3::1')).statusCode).toBe(401);
    // An IPv4 client reached over IPv6 (IPv4-mapped) is that IPv4 client.
    await statuses(6, () => attempt('203.0.113.9'));
    expect((await attempt('::ffff:203.0.113.9')).statusCode).toBe(429);
  });

  it('is off with a limit of 0', async () => {
    h = await createHarness({ flags: { authFailureRateLimit: '0' } });
    const codes = await statuses(30, () => attempt('203.0.113.7'));
    expect(codes.every((c) => c === 401)).toBe(true);
  });
});
