/**
 * The filters each process keeps in memory (services/outcomes/filters.service.ts): a filter
 * created or deleted, in this process or through another connection to the store (another
 * process), decides the next verification's look-up; a change is never missed for the cache.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Kysely } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts.service.js';
import {
  CACHED_FILTERS_PER_ACCOUNT,
  createFilter,
  deleteFilter,
  filterSetFor,
} from '../../src/services/outcomes/filters.service.js';
import { storeBackend } from '../../src/store/backend.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

/** A notification between processes takes milliseconds; the bound is for a loaded machine. */
const WAIT = { timeout: 15_000, interval: 50 };

describe.each(testBackends())('the filters cache (%s)', (backend) => {
  let store: TestStore;
  let other: Kysely<Database>;
  let accountId: string;
  const clock = new ManualClock();
  beforeEach(async () => {
    store = await openTestStore(backend);
    other = await store.openAnother();
    accountId = (await createAccount(store.db, clock, { email: 'owner@example.org' })).id;
    // PostgreSQL's token exists once its listening connection is up.
    await vi.waitFor(() => expect(storeBackend(store.db).changes.changeToken()).not.toBeNull(), WAIT);
  });
  afterEach(async () => {
    await store.close();
  });

  const decides = async (email: string) =>
    (await filterSetFor(store.db, accountId, [email])).match(email)?.action ?? null;

  it("sees this process's changes at once", async () => {
    expect(await decides('ann@blocked.test')).toBeNull();
    expect(await decides('ann@blocked.test')).toBeNull();
    const made = await createFilter(store.db, clock, {
      accountId,
      action: 'block',
      match: 'domain',
      value: 'blocked.test',
    });
    expect(await decides('ann@blocked.test')).toBe('block');
    await deleteFilter(store.db, accountId, made.id);
    expect(await decides('ann@blocked.test')).toBeNull();
  });

  it("sees another process's changes", async () => {
    expect(await decides('bob@other.test')).toBeNull();
    expect(await decides('bob@other.test')).toBeNull();
    const made = await createFilter(other, clock, {
      accountId,
      action: 'allow',
      match: 'tld',
      value: 'test',
    });
    await vi.waitFor(async () => expect(await decides('bob@other.test')).toBe('allow'), WAIT);
    await deleteFilter(other, accountId, made.id);
    await vi.waitFor(async () => expect(await decides('bob@other.test')).toBeNull(), WAIT);
  });

  it(`reads an account of more than ${CACHED_FILTERS_PER_ACCOUNT} filters for each look-up, and still decides by them`, async () => {
    await store.db
      .insertInto('account_filters')
      .values(
        Array.from({ length: CACHED_FILTERS_PER_ACCOUNT + 1 }, (_, i) => ({
          id: `flt_bulk${i}`,
          account_id: accountId,
          action: 'block' as const,
          match: 'email' as const,
          value: `u${i}@many.test`,
          created_at: clock.now().toISOString(),
        })),
      )
      .execute();
    expect(await decides(`u${CACHED_FILTERS_PER_ACCOUNT}@many.test`)).toBe('block');
    expect(await decides('nobody@many.test')).toBeNull();
    await createFilter(other, clock, { accountId, action: 'allow', match: 'email', value: 'late@many.test' });
    await vi.waitFor(async () => expect(await decides('late@many.test')).toBe('allow'), WAIT);
  });
});
