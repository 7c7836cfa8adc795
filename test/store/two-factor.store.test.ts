/**
 * Migration 0008's tables on every backend, several connections (processes) at once where the
 * rule is about concurrency: a TOTP step taken once, a recovery code used once, a challenge used
 * once, the account's requirement defaulting to off, and rows that go with their member.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { issueInvitation } from '../../src/services/people/members.service.js';
import type { Database } from '../../src/store/schema.js';
import {
  accountRequiresTwoFactor,
  deleteChallenge,
  insertChallenge,
  replaceRecoveryCodes,
  savePendingSecret,
  setAccountRequiresTwoFactor,
  takeStep,
  useRecoveryCode,
} from '../../src/store/two-factor.store.js';
import { openTestStore, tableNames, testBackends, type TestStore } from '../kit/store-harness.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');
const NOW = clock.now().toISOString();

describe.each(testBackends())('the two-factor tables on %s', (backend) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function processes(n: number): Promise<Kysely<Database>[]> {
    const dbs = [store!.db];
    while (dbs.length < n) dbs.push(await store!.openAnother());
    return dbs;
  }

  async function member(): Promise<{ accountId: string; memberId: string }> {
    const account = await createAccount(store!.db, clock, { email: 'ops@example.org' });
    const issued = await issueInvitation(store!.db, clock, {
      accountId: account.id,
      email: 'ann@example.org',
    });
    return { accountId: account.id, memberId: issued.personId };
  }

  it('creates its tables, and an account requires nothing until its owner says so', async () => {
    store = await openTestStore(backend);
    expect(await tableNames(store)).toEqual(
      expect.arrayContaining(['member_two_factor', 'member_recovery_codes', 'sign_in_challenges']),
    );
    const { accountId } = await member();
    expect(await accountRequiresTwoFactor(store.db, accountId)).toBe(false);
    await setAccountRequiresTwoFactor(store.db, accountId, true);
    expect(await accountRequiresTwoFactor(store.db, accountId)).toBe(true);
    await expect(
      store.db.updateTable('accounts').set({ require_two_factor: 2 }).where('id', '=', accountId).execute(),
    ).rejects.toThrow();
  });

  it('takes a TOTP step once across processes, and never an earlier one', async () => {
    store = await openTestStore(backend);
    const { memberId } = await member();
    expect(await savePendingSecret(store.db, memberId, 'JBSWY3DPEHPK3PXP', NOW)).toBe(true);
    expect(await takeStep(store.db, memberId, 100, null)).toBe(false); // not enabled yet
    expect(await takeStep(store.db, memberId, 100, { now: NOW })).toBe(true);
    // Enabled: a new enrolment cannot overwrite the secret.
    expect(await savePendingSecret(store.db, memberId, 'KRSXG5CTMVRXEZLU', NOW)).toBe(false);
    const dbs = await processes(4);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => takeStep(dbs[i % dbs.length]!, memberId, 101, null)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await takeStep(store.db, memberId, 101, null)).toBe(false);
    expect(await takeStep(store.db, memberId, 99, null)).toBe(false);
    expect(await takeStep(store.db, memberId, 102, null)).toBe(true);
  });

  it('uses a recovery code and a challenge once across processes, and only for their member', async () => {
    store = await openTestStore(backend);
    const { memberId } = await member();
    await replaceRecoveryCodes(store.db, memberId, ['a'.repeat(64), 'b'.repeat(64)], NOW);
    expect(await useRecoveryCode(store.db, 'mem_other', 'a'.repeat(64), NOW)).toBe(false);
    const dbs = await processes(4);
    const used = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        useRecoveryCode(dbs[i % dbs.length]!, memberId, 'a'.repeat(64), NOW),
      ),
    );
    expect(used.filter(Boolean)).toHaveLength(1);
    await insertChallenge(store.db, {
      id: 'c'.repeat(64),
      person_id: memberId,
      created_at: NOW,
      expires_at: NOW,
    });
    const deleted = await Promise.all(dbs.map((db) => deleteChallenge(db, 'c'.repeat(64))));
    expect(deleted.filter(Boolean)).toHaveLength(1);
  });

  it('forgets the second factor, its codes and its challenges with the person', async () => {
    store = await openTestStore(backend);
    const { memberId } = await member();
    await savePendingSecret(store.db, memberId, 'JBSWY3DPEHPK3PXP', NOW);
    await replaceRecoveryCodes(store.db, memberId, ['a'.repeat(64)], NOW);
    await insertChallenge(store.db, {
      id: 'c'.repeat(64),
      person_id: memberId,
      created_at: NOW,
      expires_at: NOW,
    });
    await store.db.deleteFrom('people').where('id', '=', memberId).execute();
    for (const table of ['member_two_factor', 'member_recovery_codes', 'sign_in_challenges'] as const)
      expect(await store.db.selectFrom(table).selectAll().execute()).toEqual([]);
  });
});
