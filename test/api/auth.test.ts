import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/services/keys/keys.service.js';
import { openDatabase } from '../../src/store/db.js';
import { runCli } from '../kit/cli.js';
import { createHarness, type Harness } from '../kit/api-harness.js';

describe('API keys on the API', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const newKey = async (scopes?: string[]) =>
    createKey(h.runtime.ctx.db, h.clock, {
      accountId: h.accountId,
      kind: 'test',
      ...(scopes ? { scopes } : {}),
    });

  it('a revoked key is refused with 401 revoked_api_key on the very next request', async () => {
    const { key, record } = await newKey();
    expect((await h.verify(key, { email: 'a@valid.example.com' })).statusCode).toBe(200);
    await revokeKey(h.runtime.ctx.db, h.clock, record.id);
    const res = await h.verify(key, { email: 'a@valid.example.com' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'revoked_api_key', request_id: res.headers['x-request-id'] });
  });

  it('a revocation made by another process (another connection to the store) takes effect at once', async () => {
    const { key, record } = await newKey();
    expect((await h.usage(key)).statusCode).toBe(200);
    const other = openDatabase(h.runtime.ctx.config);
    try {
      await revokeKey(other, h.clock, record.id);
    } finally {
      await other.destroy();
    }
    const res = await h.usage(key);
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('revoked_api_key');
  });

  it('a key answered from the cache is refused at once after `mailverdict keys revoke` in another process', async () => {
    const { key, record } = await newKey();
    // Two requests: the second is answered from the authenticated-key cache.
    for (let i = 0; i < 2; i++)
      expect((await h.verify(key, { email: 'a@valid.example.com' })).statusCode).toBe(200);
    const { databaseUrl } = h.runtime.ctx.config;
    const store =
      databaseUrl === null
        ? ['--data-dir', h.dir]
        : ['--database-url', databaseUrl, '--secret-key', h.runtime.ctx.config.secrets.key ?? ''];
    const cli = await runCli(['keys', 'revoke', record.id, ...store, '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const res = await h.verify(key, { email: 'a@valid.example.com' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'revoked_api_key', request_id: res.headers['x-request-id'] });
  }, 30_000);

  it('403 insufficient_permissions when the key lacks the route scope', async () => {
    const usageOnly = await newKey(['usage:read']);
    const res = await h.verify(usageOnly.key, { email: 'a@valid.example.com' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({
      error: 'insufficient_permissions',
      request_id: res.headers['x-request-id'],
    });
    expect((await h.usage(usageOnly.key)).statusCode).toBe(200);

    const verifyOnly = await newKey(['verify']);
    expect((await h.verify(verifyOnly.key, { email: 'a@valid.example.com' })).statusCode).toBe(200);
    const usage = await h.usage(verifyOnly.key);
    expect(usage.statusCode).toBe(403);
    expect(usage.json().error).toBe('insufficient_permissions');
  });

  it('checks the scope before the body: a key without scope and a bad body gets 403', async () => {
    const usageOnly = await newKey(['usage:read']);
    const res = await h.inject({
      method: 'POST',
      url: '/v1/verify',
      headers: { authorization: `Bearer ${usageOnly.key}`, 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(res.statusCode).toBe(403);
  });

  it('accepts the Bearer scheme case-insensitively', async () => {
    const res = await h.inject({
      method: 'GET',
      url: '/v1/account/usage',
      headers: { authorization: `bearer ${h.testKey}` },
    });
    expect(res.statusCode).toBe(200);
  });
});
