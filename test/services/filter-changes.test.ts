/**
 * A filter change as a person makes it (issue 28: use cases whole in services): the suspension
 * check, the change and its security-log entry in one transaction, in the service.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { listAudit, type ChangeBy } from '../../src/services/accounts/audit.service.js';
import { createFilterBy, deleteFilterBy, listFilters } from '../../src/services/outcomes/filters.service.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const MEMBER: ChangeBy = {
  actor: { kind: 'member', memberId: 'mem_1', email: 'owner@example.org' },
  origin: { clientIp: '192.0.2.9', userAgent: 'test' },
};

describe.each(testBackends())('filter changes with their log entries (%s)', (backend) => {
  let store: TestStore;
  let accountId: string;
  const clock = new ManualClock();
  beforeEach(async () => {
    store = await openTestStore(backend);
    accountId = (await createAccount(store.db, clock, { email: 'owner@example.org' })).id;
  });
  afterEach(async () => {
    await store.close();
  });
  const logTypes = async () => (await listAudit(store.db, accountId, {})).entries.map((e) => e.type);
  const block = { action: 'block', match: 'email', value: 'someone@example.com' } as const;

  it("logs a creation and a deletion, an address filter's value by its domain only", async () => {
    const made = await createFilterBy(store.db, clock, { ...block, accountId }, MEMBER);
    clock.advance(1000);
    await deleteFilterBy(store.db, clock, accountId, made.id, MEMBER);
    const { entries } = await listAudit(store.db, accountId, {});
    expect(entries.map((e) => [e.type, e.actor.kind, e.details])).toEqual([
      [
        'filter_deleted',
        'member',
        { filter_id: made.id, action: 'block', match: 'email', value: '*@example.com' },
      ],
      [
        'filter_created',
        'member',
        { filter_id: made.id, action: 'block', match: 'email', value: '*@example.com' },
      ],
    ]);
  });

  it("writes neither the filter nor its entry when the caller's transaction rolls back", async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await createFilterBy(trx, clock, { ...block, accountId }, MEMBER);
        throw new Error('the caller fails after the change');
      }),
    ).rejects.toThrow('the caller fails');
    expect(await listFilters(store.db, accountId)).toEqual([]);
    expect(await logTypes()).toEqual([]);
  });

  it("refuses a member's change while the account is suspended, writing nothing", async () => {
    await store.db
      .updateTable('accounts')
      .set({ suspended_at: clock.now().toISOString(), suspended_reason: 'unpaid' })
      .where('id', '=', accountId)
      .execute();
    await expect(createFilterBy(store.db, clock, { ...block, accountId }, MEMBER)).rejects.toMatchObject({
      code: 'account_suspended',
    });
    expect(await listFilters(store.db, accountId)).toEqual([]);
    expect(await logTypes()).toEqual([]);
  });
});
