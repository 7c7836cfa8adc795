/**
 * API keys from the dashboard: created with the secret shown once, listed with their last use,
 * revoked with effect on the very next v1 request, the 10-key limit, rotation, and another
 * account's key answering 404 exactly like an unknown one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/clock.js';
import type { CreatedKey, KeyItem, KeyList } from '../../src/dashboard/contract.js';
import { createKey, MAX_ACTIVE_KEYS } from '../../src/services/keys/keys.service.js';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness;
let browser: Browser;
beforeEach(async () => {
  h = await createDashboardHarness();
  ({ browser } = await h.signedIn());
}, SLOW.timeout);
afterEach(async () => {
  await h.close();
});

async function keyList(): Promise<KeyList> {
  return (await browser.get(`${API}/keys`)).json<KeyList>();
}

describe('dashboard API keys', SLOW, () => {
  it('creates a key and shows its secret once, never in the list', async () => {
    h.manualClock.advance(1000);
    const res = await browser.post('keys', { name: 'ci', kind: 'live', scopes: ['verify', 'usage:read'] });
    expect(res.statusCode).toBe(201);
    const created = res.json<CreatedKey>();
    expect(created.secret).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(created.key).toMatchObject({
      name: 'ci',
      kind: 'live',
      scopes: ['verify', 'usage:read'],
      status: 'active',
    });
    expect(created.key.display).toBe(`svc_live_…${created.secret.slice(-4)}`);
    const list = await browser.get(`${API}/keys`);
    expect(list.body).not.toContain(created.secret);
    const body = list.json<KeyList>();
    expect(body.keys[0]!.id).toBe(created.key.id);
    expect(body).toMatchObject({
      limit: MAX_ACTIVE_KEYS,
      scopes: [
        'verify',
        'batch',
        'jobs:read',
        'usage:read',
        'outcomes:write',
        'outcomes:read',
        'filters:write',
      ],
    });
    expect(body.active).toBe(3);
  });

  it('lets the created key call v1', async () => {
    const { secret } = (
      await browser.post('keys', { name: 'app', kind: 'test', scopes: ['verify'] })
    ).json<CreatedKey>();
    const res = await h.v1('POST', '/v1/verify', secret, { email: 'anna@valid.example.com' });
    expect(res.statusCode).toBe(200);
  });

  it('revokes a key: the next v1 request with it gets 401, after one that filled the key cache', async () => {
    const { secret, key } = (
      await browser.post('keys', { name: 'app', kind: 'test', scopes: ['verify'] })
    ).json<CreatedKey>();
    expect((await h.v1('POST', '/v1/verify', secret, { email: 'anna@valid.example.com' })).statusCode).toBe(
      200,
    );
    const revoked = await browser.post(`keys/${key.id}/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json<KeyItem>()).toMatchObject({
      id: key.id,
      status: 'revoked',
      revoked_at: h.clock.now().toISOString(),
    });
    const res = await h.v1('POST', '/v1/verify', secret, { email: 'anna@valid.example.com' });
    expect(res.statusCode).toBe(401);
    expect(res.json<{ error: string }>().error).toBe('revoked_api_key');
  });

  it('records when a key was last used, at most once a minute', async () => {
    const { secret, key } = (
      await browser.post('keys', { name: 'app', kind: 'test', scopes: ['verify'] })
    ).json<CreatedKey>();
    const lastUsed = async () => (await keyList()).keys.find((k) => k.id === key.id)!.last_used_at;
    expect(await lastUsed()).toBeNull();
    const first = h.clock.now().toISOString();
    await h.v1('POST', '/v1/verify', secret, { email: 'anna@valid.example.com' });
    // The write follows the response; app.close() or a second request waits for nothing, so poll the list.
    await expect.poll(lastUsed).toBe(first);
    h.manualClock.advance(30_000);
    await h.v1('POST', '/v1/verify', secret, { email: 'anna@valid.example.com' });
    h.manualClock.advance(MINUTE);
    const third = h.clock.now().toISOString();
    expect(await lastUsed()).toBe(first);
    await h.v1('POST', '/v1/verify', secret, { email: 'anna@valid.example.com' });
    await expect.poll(lastUsed).toBe(third);
  });

  it('refuses the 11th active key with 409 key_limit_reached and a message', async () => {
    const active = (await keyList()).active;
    for (let i = active; i < MAX_ACTIVE_KEYS; i++)
      expect(
        (await browser.post('keys', { name: `k${i}`, kind: 'test', scopes: ['verify'] })).statusCode,
      ).toBe(201);
    const res = await browser.post('keys', { name: 'one too many', kind: 'test', scopes: ['verify'] });
    expect(res.statusCode).toBe(409);
    expect(errorCode(res)).toBe('key_limit_reached');
    expect(res.json<{ message: string }>().message).toMatch(/10 active keys; revoke one first/);
  });

  it('rotates a key: a replacement with its name, kind and scopes, the old one still active', async () => {
    const { key } = (
      await browser.post('keys', { name: 'app', kind: 'live', scopes: ['batch', 'jobs:read'] })
    ).json<CreatedKey>();
    const res = await browser.post(`keys/${key.id}/rotate`);
    expect(res.statusCode).toBe(201);
    const rotated = res.json<CreatedKey>();
    expect(rotated.replaces).toBe(key.id);
    expect(rotated.key).toMatchObject({
      name: 'app',
      kind: 'live',
      scopes: ['batch', 'jobs:read'],
      status: 'active',
    });
    expect(rotated.secret).toMatch(/^svc_live_/);
    const list = await keyList();
    expect(list.keys.find((k) => k.id === key.id)!.status).toBe('active');
  });

  it('refuses invalid bodies with 422 naming the field', async () => {
    const res = await browser.post('keys', { name: 'x', kind: 'gold', scopes: ['verify'] });
    expect(res.statusCode).toBe(422);
    expect(errorCode(res)).toBe('invalid_request');
    const scope = await browser.post('keys', { name: 'x', kind: 'live', scopes: ['everything'] });
    expect(scope.statusCode).toBe(422);
  });

  it('answers 404 for another account’s key, exactly as for an unknown id, and leaves it alone', async () => {
    const other = await h.createOtherAccount();
    const theirs = await createKey(h.runtime.ctx.db, h.clock, { accountId: other.accountId, kind: 'live' });
    const strip = (body: string) =>
      body
        .replace(/req_[0-9a-f]+/, 'req_')
        .replace(theirs.record.id, 'ID')
        .replace('key_unknown0000000', 'ID');
    for (const action of ['revoke', 'rotate']) {
      const res = await browser.post(`keys/${theirs.record.id}/${action}`);
      const unknown = await browser.post(`keys/key_unknown0000000/${action}`);
      expect([res.statusCode, unknown.statusCode]).toEqual([404, 404]);
      expect(strip(res.body)).toBe(strip(unknown.body));
    }
    expect(
      (await h.v1('POST', '/v1/verify', theirs.key, { email: 'x@valid.example.com' })).statusCode,
    ).not.toBe(401);
    expect((await keyList()).keys.some((k) => k.id === theirs.record.id)).toBe(false);
  });
});
