import { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount, setAccountLimits } from '../../src/services/accounts/accounts.service.js';
import { createKeyCache, type KeyCache } from '../../src/services/keys/key-cache.js';
import {
  authenticateKey,
  createKey,
  revokeKey,
  type AuthenticatedKey,
} from '../../src/services/keys/keys.service.js';
import { createSqliteDialect } from '../../src/store/dialect/sqlite-dialect.js';
import { databasePath } from '../../src/store/db.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, type TestStore } from '../kit/store-harness.js';

describe('the authenticated-key cache', () => {
  let store: TestStore;
  let other: Kysely<Database>;
  let cache: KeyCache<AuthenticatedKey>;
  let accountId: string;
  const clock = new ManualClock();
  beforeEach(async () => {
    store = await openTestStore();
    // A second connection to the same file: to SQLite, another process.
    other = new Kysely<Database>({ dialect: createSqliteDialect(databasePath(store.dir)) });
    cache = createKeyCache();
    accountId = (await createAccount(store.db, clock, { email: 'c@example.org', rateLimit: 5 })).id;
  });
  afterEach(async () => {
    await other.destroy();
    await store.close();
  });

  it('answers a key seen before from memory while the store is unchanged', async () => {
    const { key } = await createKey(store.db, clock, { accountId, kind: 'test' });
    const first = await authenticateKey(store.db, key, cache);
    // The same object: nothing was read from the store.
    expect(await authenticateKey(store.db, key, cache)).toBe(first);
  });

  it('still reads the store when another connection has committed anything since', async () => {
    const { key } = await createKey(store.db, clock, { accountId, kind: 'test' });
    const first = await authenticateKey(store.db, key, cache);
    await createAccount(other, clock, { email: 'unrelated@example.org' });
    const second = await authenticateKey(store.db, key, cache);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  it('refuses a cached key revoked by another connection on the very next call', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'test' });
    await authenticateKey(store.db, key, cache);
    await authenticateKey(store.db, key, cache);
    await revokeKey(other, clock, record.id);
    await expect(authenticateKey(store.db, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it('refuses a cached key revoked through this connection on the very next call', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'test' });
    await authenticateKey(store.db, key, cache);
    await revokeKey(store.db, clock, record.id);
    await expect(authenticateKey(store.db, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it('sees a write of this connection to api_keys made with any statement, not only revokeKey', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'test' });
    await authenticateKey(store.db, key, cache);
    await store.db
      .updateTable('api_keys')
      .set({ revoked_at: clock.now().toISOString() })
      .where('id', '=', record.id)
      .execute();
    await expect(authenticateKey(store.db, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it("picks up the account's new rate limit and plan, changed here or by another connection", async () => {
    const { key } = await createKey(store.db, clock, { accountId, kind: 'live' });
    expect(await authenticateKey(store.db, key, cache)).toMatchObject({ accountRateLimit: 5 });
    await setAccountLimits(store.db, clock, accountId, { rateLimit: 7 });
    expect(await authenticateKey(store.db, key, cache)).toMatchObject({ accountRateLimit: 7 });
    await other.updateTable('accounts').set({ plan: 'pro' }).where('id', '=', accountId).execute();
    expect(await authenticateKey(store.db, key, cache)).toMatchObject({ accountPlan: 'pro' });
  });

  it('drops what was read under an older token once a newer one has been seen', () => {
    const entry = {
      keyId: 'key_1',
      accountId: 'acct_1',
      kind: 'test' as const,
      scopes: new Set(['verify' as const]),
      prefix: 'svc_test_',
      accountPlan: 'free',
      accountRateLimit: null,
      accountQuotaLimit: null,
      accountSuspension: null,
      publishable: null,
    };
    expect(cache.lookup('h', 1)).toBeUndefined();
    // A slow request read token 1, then another request saw token 2 before the first one's query returned.
    expect(cache.lookup('other', 2)).toBeUndefined();
    cache.remember('h', entry, 1);
    expect(cache.lookup('h', 2)).toBeUndefined();
    cache.remember('h', entry, 2);
    expect(cache.lookup('h', 2)).toBe(entry);
    expect(cache.lookup('h', 3)).toBeUndefined();
  });

  it('refuses a key revoked inside a transaction from the request after it, not from memory', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'test' });
    await authenticateKey(store.db, key, cache);
    let during: Promise<unknown> = Promise.resolve();
    // Transactions begin IMMEDIATE, so no other process can commit while this one is open; the
    // revocation is this transaction's own write, and a request arriving meanwhile must not be
    // answered from the cache filled before it.
    await store.db.transaction().execute(async (trx) => {
      await revokeKey(trx, clock, record.id);
      during = authenticateKey(store.db, key, cache).then(
        () => 'served',
        (err: { code?: string }) => err.code,
      );
    });
    expect(await during).toBe('revoked_api_key');
  });

  it('never keeps a malformed, unknown or revoked key', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'test' });
    await revokeKey(store.db, clock, record.id);
    for (let i = 0; i < 2; i++)
      await expect(authenticateKey(store.db, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
    const unknown = `svc_test_${'A'.repeat(40)}`;
    for (let i = 0; i < 2; i++)
      await expect(authenticateKey(store.db, unknown, cache)).rejects.toMatchObject({
        code: 'invalid_api_key',
      });
  });

  it('refuses a cached key presented with the other kind prefix', async () => {
    const { key } = await createKey(store.db, clock, { accountId, kind: 'test' });
    await authenticateKey(store.db, key, cache);
    // Same secret, other prefix: another hash, so an unknown key.
    await expect(
      authenticateKey(store.db, key.replace('svc_test_', 'svc_live_'), cache),
    ).rejects.toMatchObject({ code: 'invalid_api_key' });
  });
});
