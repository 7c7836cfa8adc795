import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { AppError } from '../../src/errors.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import {
  MAX_ACTIVE_KEYS,
  authenticateKey,
  createKey,
  hashKey,
  revokeKey,
} from '../../src/services/keys/keys.service.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

describe.each(testBackends())('API keys (%s)', (backend) => {
  let store: TestStore;
  let accountId: string;
  const clock = new ManualClock();
  beforeEach(async () => {
    store = await openTestStore(backend);
    accountId = (await createAccount(store.db, clock, { email: 'k@example.org' })).id;
  });
  afterEach(async () => {
    await store.close();
  });

  it('have the svc_live_/svc_test_ prefix and 40 base62 characters, all different', async () => {
    const seen = new Set<string>();
    for (const kind of ['live', 'test', 'live', 'test']) {
      const { key } = await createKey(store.db, clock, { accountId, kind });
      expect(key).toMatch(new RegExp(`^svc_${kind}_[0-9A-Za-z]{40}$`));
      seen.add(key);
    }
    expect(seen.size).toBe(4);
  });

  it('are stored as a SHA-256 hash with prefix and last four characters only', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'live' });
    const row = await store.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashKey(key));
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.prefix).toBe('svc_live_');
    expect(row.last4).toBe(key.slice(-4));
    expect(Object.values(row).some((v) => typeof v === 'string' && v.includes(key.slice(9)))).toBe(false);
  });

  it(`allow ${MAX_ACTIVE_KEYS} active keys per account; the next is refused with key_limit_reached`, async () => {
    for (let i = 0; i < MAX_ACTIVE_KEYS; i++) await createKey(store.db, clock, { accountId, kind: 'test' });
    const refused = createKey(store.db, clock, { accountId, kind: 'live' });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ code: 'key_limit_reached' });
    const count = await store.db
      .selectFrom('api_keys')
      .select((e) => e.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(MAX_ACTIVE_KEYS);
  });

  it('count only active keys toward the limit: revoking one makes room (rotation)', async () => {
    const first = await createKey(store.db, clock, { accountId, kind: 'live' });
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) await createKey(store.db, clock, { accountId, kind: 'live' });
    await revokeKey(store.db, clock, first.record.id);
    await expect(createKey(store.db, clock, { accountId, kind: 'live' })).resolves.toBeDefined();
  });

  it('never exceed the limit under concurrent creation', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 15 }, () => createKey(store.db, clock, { accountId, kind: 'test' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_ACTIVE_KEYS);
  });

  it('authenticate by hash and tell unknown, malformed and revoked keys apart', async () => {
    const { key, record } = await createKey(store.db, clock, { accountId, kind: 'test', scopes: ['verify'] });
    const auth = await authenticateKey(store.db, key);
    expect(auth).toMatchObject({ keyId: record.id, accountId, kind: 'test' });
    expect([...auth.scopes]).toEqual(['verify']);
    // Another last character (a key ending in X would otherwise stay itself, 1 run in 62).
    const altered = `${key.slice(0, -1)}${key.endsWith('X') ? 'Y' : 'X'}`;
    await expect(authenticateKey(store.db, altered)).rejects.toMatchObject({
      code: 'invalid_api_key',
    });
    await expect(authenticateKey(store.db, 'svc_test_abc')).rejects.toMatchObject({
      code: 'invalid_api_key',
    });
    await revokeKey(store.db, clock, record.id);
    await expect(authenticateKey(store.db, key)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it('refuse an unknown scope or kind', async () => {
    await expect(
      createKey(store.db, clock, { accountId, kind: 'live', scopes: ['admin'] }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(createKey(store.db, clock, { accountId, kind: 'prod' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});
