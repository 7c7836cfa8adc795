/**
 * Publishable keys in the store (migration 0006), on every backend: the key's origins and limits
 * are stored with it and read back by authentication, the daily count never passes its cap even
 * when several processes count at once, and a revoked key's origins no longer open a preflight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { authenticateKey, createKey, revokeKey } from '../../src/services/keys/keys.service.js';
import { activePublishableOrigins, countKeyDay, findKeyById } from '../../src/store/key.store.js';
import { openTestStore, tableNames, testBackends, type TestStore } from '../kit/store-harness.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');

describe.each(testBackends())('publishable keys in the store on %s', (backend) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('stores a publishable key hashed, with its origins and limits, and a secret key as before', async () => {
    store = await openTestStore(backend);
    expect(await tableNames(store)).toContain('api_key_days');
    const account = await createAccount(store.db, clock, { email: 'shop@example.org' });
    const { key, record } = await createKey(store.db, clock, {
      accountId: account.id,
      kind: 'live',
      publishable: {
        allowedOrigins: ['https://shop.example', 'http://localhost:5173'],
        visitorRateLimit: 3,
        dailyCap: 500,
      },
    });
    const row = await findKeyById(store.db, record.id);
    expect(row).toMatchObject({
      publishable: 1,
      prefix: 'svc_live_pub_',
      allowed_origins: 'https://shop.example http://localhost:5173',
      visitor_rate_limit: 3,
      key_rate_limit: null,
      daily_cap: 500,
    });
    expect(row?.key_hash).not.toContain(key.slice(13));
    const auth = await authenticateKey(store.db, key);
    expect(auth.publishable).toEqual({
      origins: new Set(['https://shop.example', 'http://localhost:5173']),
      visitorRateLimit: 3,
      keyRateLimit: null,
      dailyCap: 500,
    });
    const secret = await createKey(store.db, clock, { accountId: account.id, kind: 'live' });
    expect((await findKeyById(store.db, secret.record.id))?.publishable).toBe(0);
    expect((await authenticateKey(store.db, secret.key)).publishable).toBeNull();
  });

  it('never counts past the daily cap, with several processes counting at once', async () => {
    store = await openTestStore(backend);
    const account = await createAccount(store.db, clock, { email: 'cap@example.org' });
    const { record } = await createKey(store.db, clock, {
      accountId: account.id,
      kind: 'test',
      publishable: { allowedOrigins: ['https://shop.example'] },
    });
    const dbs = [store.db, await store.openAnother(), await store.openAnother()];
    const counts = await Promise.all(
      Array.from({ length: 24 }, (_, i) => countKeyDay(dbs[i % dbs.length]!, record.id, '2026-03-10', 7)),
    );
    expect(counts.filter((c) => c !== undefined).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Another day starts from zero.
    expect(await countKeyDay(store.db, record.id, '2026-03-11', 7)).toBe(1);
  });

  it('lists the origins of active publishable keys only', async () => {
    store = await openTestStore(backend);
    const account = await createAccount(store.db, clock, { email: 'origins@example.org' });
    const make = (origin: string) =>
      createKey(store!.db, clock, {
        accountId: account.id,
        kind: 'test',
        publishable: { allowedOrigins: [origin] },
      });
    await make('https://a.example');
    const b = await make('https://b.example');
    await createKey(store.db, clock, { accountId: account.id, kind: 'test' });
    await revokeKey(store.db, clock, b.record.id);
    expect(await activePublishableOrigins(store.db)).toEqual(['https://a.example']);
  });
});
