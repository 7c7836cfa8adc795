/**
 * What each process keeps in memory of an account's data (services/store-memo.ts): its filters,
 * and the delivery outcomes of the addresses it looked up. A filter created or deleted, an outcome
 * taken or erased, in this process or through another connection to the store (another process),
 * decides the next look-up; nothing kept outlives a change.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Kysely } from 'kysely';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import {
  CACHED_FILTERS_PER_ACCOUNT,
  createFilter,
  deleteFilter,
  filterSetFor,
} from '../../src/services/outcomes/filters.service.js';
import { eraseOutcomes, takeOutcomes } from '../../src/services/outcomes/intake.service.js';
import { historyOf } from '../../src/services/outcomes/history.js';
import { decideByAccount } from '../../src/services/outcomes/account-data.js';
import { createVerifier } from '../../src/engine/index.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import { createVerdictLog } from '../../src/services/outcomes/verdict-log.js';
import { storeBackend } from '../../src/store/backend.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

/** A notification between processes takes milliseconds; the bound is for a loaded machine. */
const WAIT = { timeout: 15_000, interval: 50 };

describe.each(testBackends())('account data kept in memory (%s)', (backend) => {
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

  it('sees an outcome taken or erased by this process or another, for an address read before', async () => {
    const suppressed = async (email: string) =>
      (await historyOf(store.db, accountId, [email]))[0]!.suppression?.reason ?? null;
    const take = (db: Kysely<Database>, email: string) =>
      takeOutcomes(
        { db, clock, retentionMs: 365 * 24 * 3600_000, resultCache: null },
        { accountId, source: 'api', events: [{ email, type: 'hard_bounce', at: '2026-01-05T08:00:00Z' }] },
      );
    expect(await suppressed('gone@here.test')).toBeNull();
    expect(await suppressed('gone@here.test')).toBeNull();
    await take(store.db, 'gone@here.test');
    expect(await suppressed('gone@here.test')).toBe('previously_bounced');

    expect(await suppressed('gone@there.test')).toBeNull();
    expect(await suppressed('gone@there.test')).toBeNull();
    await take(other, 'gone@there.test');
    await vi.waitFor(
      async () => expect(await suppressed('gone@there.test')).toBe('previously_bounced'),
      WAIT,
    );
    const verdictLog = createVerdictLog({ db: other, clock, logger: pino({ level: 'silent' }) });
    await eraseOutcomes(
      { db: other, resultCache: null, verdictLog },
      { accountId, email: 'gone@there.test' },
    );
    await vi.waitFor(async () => expect(await suppressed('gone@there.test')).toBeNull(), WAIT);
  });

  it('decides again, by a filter or an outcome from another process, an address it left to the network before', async () => {
    const verifier = createVerifier(kitEngineOptions('127.0.0.1:9', 9));
    try {
      const deps = { db: store.db, clock, verifier };
      const decide = async (email: string) => {
        const [decision] = await decideByAccount(deps, accountId, [email]);
        return 'result' in decision! ? decision.result.reason : 'network';
      };
      expect(await decide('ann@later-blocked.test')).toBe('network');
      expect(await decide('ann@later-blocked.test')).toBe('network');
      expect(await decide('bob@later-bounced.test')).toBe('network');
      expect(await decide('bob@later-bounced.test')).toBe('network');
      await createFilter(other, clock, {
        accountId,
        action: 'block',
        match: 'domain',
        value: 'later-blocked.test',
      });
      await vi.waitFor(
        async () => expect(await decide('ann@later-blocked.test')).toBe('blocked_by_filter'),
        WAIT,
      );
      await takeOutcomes(
        { db: other, clock, retentionMs: 365 * 24 * 3600_000, resultCache: null },
        {
          accountId,
          source: 'api',
          events: [{ email: 'bob@later-bounced.test', type: 'hard_bounce', at: '2026-01-05T08:00:00Z' }],
        },
      );
      await vi.waitFor(
        async () => expect(await decide('bob@later-bounced.test')).toBe('previously_bounced'),
        WAIT,
      );
    } finally {
      await verifier.close();
    }
  });
});
