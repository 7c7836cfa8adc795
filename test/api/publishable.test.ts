/**
 * Publishable keys on a real app and store (docs/widget.md): the origin and endpoint matrix, the
 * CORS preflight, the reduced answer, the visitor, key and daily limits, quota and revocation.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ManualClock } from '../../src/clock.js';
import { createKey, revokeKey } from '../../src/services/keys/keys.service.js';
import type { PublishableOptions } from '../../src/services/keys/publishable-keys.js';
import { createMemoryRateLimiter } from '../../src/services/usage/rate-limit.js';
import { createHarness, errorOf, type Harness } from '../kit/api-harness.js';

const SHOP = 'https://shop.example';
const OTHER = 'https://evil.example';

describe('publishable keys', () => {
  let h: Harness;
  let clock: ManualClock;
  // The app's clock (the daily cap) and the rate limiter's are one frozen clock: no test waits.
  let app: FastifyInstance;
  let n = 0;

  beforeAll(async () => {
    clock = new ManualClock('2026-03-10T12:00:00.000Z');
    h = await createHarness({ clock, account: { plan: 'growth' } });
    app = buildApp({ ...h.runtime.ctx, rateLimiter: createMemoryRateLimiter({ clock }) });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await h.close();
  });

  async function publishable(kind: 'live' | 'test', options: Partial<PublishableOptions> = {}) {
    const created = await createKey(h.runtime.ctx.db, clock, {
      accountId: h.accountId,
      kind,
      name: `widget ${++n}`,
      publishable: { allowedOrigins: [SHOP], visitorRateLimit: 100, keyRateLimit: 100, ...options },
    });
    return created;
  }

  const verify = (key: string, headers: Record<string, string> = {}, extra: Partial<InjectOptions> = {}) =>
    app.inject({
      method: 'POST',
      url: '/v1/verify',
      headers: { authorization: `Bearer ${key}`, ...headers },
      payload: { email: 'anna@valid.example.com' },
      ...extra,
    });

  it('has an environment prefix with pub_, the verify scope only, and its origins', async () => {
    const { key, record } = await publishable('test');
    expect(key).toMatch(/^svc_test_pub_[0-9A-Za-z]{40}$/);
    expect(record).toMatchObject({ publishable: true, scopes: ['verify'], allowed_origins: [SHOP] });
    const live = await publishable('live');
    expect(live.key).toMatch(/^svc_live_pub_[0-9A-Za-z]{40}$/);
    await revokeKey(h.runtime.ctx.db, clock, record.id);
    await revokeKey(h.runtime.ctx.db, clock, live.record.id);
  });

  it('answers an allowed origin with the reduced result and the CORS headers', async () => {
    const { key, record } = await publishable('test');
    const res = await verify(key, { origin: SHOP });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      ['did_you_mean', 'disposable', 'reason', 'request_id', 'score', 'status'].sort(),
    );
    expect(body).toMatchObject({ status: 'deliverable', disposable: false, reason: null });
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.headers['vary']).toContain('Origin');
    // A secret key still gets the whole result, checks included.
    const full = (
      await verify(h.testKey, {}, { payload: { email: 'anna@valid.example.com', include_checks: true } })
    ).json();
    expect(full.checks.smtp).toBeDefined();
    await revokeKey(h.runtime.ctx.db, clock, record.id);
  });

  it('refuses another origin and a request with no Origin with origin_not_allowed', async () => {
    const { key, record } = await publishable('test');
    const other = await verify(key, { origin: OTHER });
    expect(other.statusCode).toBe(403);
    expect(errorOf(other).error).toBe('origin_not_allowed');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const none = await verify(key);
    expect(none.statusCode).toBe(403);
    expect(errorOf(none).error).toBe('origin_not_allowed');
    await revokeKey(h.runtime.ctx.db, clock, record.id);
  });

  it('answers every other endpoint with insufficient_permissions, even from an allowed origin', async () => {
    const { key, record } = await publishable('test');
    const headers = { authorization: `Bearer ${key}`, origin: SHOP };
    for (const request of [
      { method: 'GET', url: '/v1/account/usage' },
      { method: 'GET', url: '/v1/jobs/job_x' },
      { method: 'POST', url: '/v1/verify/batch', payload: { emails: ['a@valid.example.com'] } },
    ] as const) {
      const res = await app.inject({ ...request, headers });
      expect(res.statusCode, request.url).toBe(403);
      expect(errorOf(res).error).toBe('insufficient_permissions');
    }
    await revokeKey(h.runtime.ctx.db, clock, record.id);
  });

  it('answers the preflight for an origin of an active publishable key only', async () => {
    const { key, record } = await publishable('test', { allowedOrigins: ['http://localhost:5173'] });
    const preflight = (origin?: string) =>
      app.inject({
        method: 'OPTIONS',
        url: '/v1/verify',
        headers: {
          ...(origin === undefined ? {} : { origin }),
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
    const ok = await preflight('http://localhost:5173');
    expect(ok.statusCode).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(ok.headers['access-control-allow-methods']).toBe('POST');
    expect(ok.headers['access-control-allow-headers']).toContain('authorization');
    expect((await preflight(OTHER)).statusCode).toBe(403);
    expect(errorOf(await preflight()).error).toBe('origin_not_allowed');

    await revokeKey(h.runtime.ctx.db, clock, record.id);
    const after = await preflight('http://localhost:5173');
    expect(after.statusCode).toBe(403);
    expect(errorOf(after).error).toBe('origin_not_allowed');
    const post = await verify(key, { origin: 'http://localhost:5173' });
    expect(post.statusCode).toBe(401);
    expect(errorOf(post).error).toBe('revoked_api_key');
  });

  it('limits each visitor by client address, and the key across visitors', async () => {
    const { key, record } = await publishable('test', { visitorRateLimit: 2, keyRateLimit: 3 });
    const from = (ip: string) => verify(key, { origin: SHOP }, { remoteAddress: ip });
    expect((await from('10.0.0.1')).statusCode).toBe(200);
    expect((await from('10.0.0.1')).statusCode).toBe(200);
    const third = await from('10.0.0.1');
    expect(third.statusCode).toBe(429);
    expect(errorOf(third).message).toContain("visitor's rate limit");
    expect(third.headers['retry-after']).toBe('1');
    // The page can read the refusal: it carries the CORS headers.
    expect(third.headers['access-control-allow-origin']).toBe(SHOP);
    expect((await from('10.0.0.2')).statusCode).toBe(200);
    const keyLimited = await from('10.0.0.3');
    expect(keyLimited.statusCode).toBe(429);
    expect(errorOf(keyLimited).message).toContain("key's rate limit");
    clock.advance(1100);
    expect((await from('10.0.0.1')).statusCode).toBe(200);
    await revokeKey(h.runtime.ctx.db, clock, record.id);
  });

  it('stops a key at its daily cap until the next UTC day', async () => {
    const { key, record } = await publishable('test', { dailyCap: 2 });
    expect((await verify(key, { origin: SHOP })).statusCode).toBe(200);
    expect((await verify(key, { origin: SHOP })).statusCode).toBe(200);
    const capped = await verify(key, { origin: SHOP });
    expect(capped.statusCode).toBe(429);
    expect(errorOf(capped).message).toContain('daily cap of 2');
    expect(Number(capped.headers['retry-after'])).toBeGreaterThan(0);
    clock.advance(24 * 3600 * 1000);
    expect((await verify(key, { origin: SHOP })).statusCode).toBe(200);
    await revokeKey(h.runtime.ctx.db, clock, record.id);
  });

  it('counts a live publishable key against the quota like any live key', async () => {
    const { key, record } = await publishable('live');
    const used = async () =>
      (
        await app.inject({
          method: 'GET',
          url: '/v1/account/usage',
          headers: { authorization: `Bearer ${h.liveKey}` },
        })
      ).json().quota.used as number;
    const before = await used();
    // The harness's DNS server knows no such domain: the live engine answers without probing.
    const res = await verify(key, { origin: SHOP }, { payload: { email: 'anna@no-such-domain.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'undeliverable' });
    expect(await used()).toBe(before + 1);
    await revokeKey(h.runtime.ctx.db, clock, record.id);
  });

  it('refuses origins with a path, a wildcard or another scheme, and other scopes', async () => {
    for (const origin of [
      'https://shop.example/signup',
      'https://*.shop.example',
      'ftp://shop.example',
      'shop.example',
    ])
      await expect(publishable('test', { allowedOrigins: [origin] })).rejects.toMatchObject({
        code: 'invalid_request',
      });
    await expect(
      createKey(h.runtime.ctx.db, clock, {
        accountId: h.accountId,
        kind: 'test',
        scopes: ['batch'],
        publishable: { allowedOrigins: [SHOP] },
      }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    const normalised = await publishable('test', { allowedOrigins: ['HTTPS://Shop.Example:443/'] });
    expect(normalised.record.allowed_origins).toEqual([SHOP]);
    await revokeKey(h.runtime.ctx.db, clock, normalised.record.id);
  });

  it('counts toward the 10-key limit', async () => {
    const made: string[] = [];
    // The harness holds 2 active keys; 8 publishable ones fill the account.
    for (let i = 0; i < 8; i++) made.push((await publishable('test')).record.id);
    await expect(publishable('test')).rejects.toMatchObject({ code: 'key_limit_reached' });
    for (const id of made) await revokeKey(h.runtime.ctx.db, clock, id);
  });
});
