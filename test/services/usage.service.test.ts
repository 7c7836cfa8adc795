import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { DEFAULT_PLANS } from '../../src/services/usage/plans.js';
import { consumeQuota, getUsage, refundQuota } from '../../src/services/usage/usage.service.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

describe.each(testBackends())('quota counting (%s)', (backend) => {
  let store: TestStore;
  const clock = new ManualClock('2026-05-05T10:00:00.000Z');
  const plans = DEFAULT_PLANS;
  beforeEach(async () => {
    store = await openTestStore(backend);
  });
  afterEach(async () => {
    await store.close();
  });

  const account = async (plan: string, quotaLimit: number) =>
    (await createAccount(store.db, clock, { email: 'q@example.org', plan, quotaLimit })).id;
  const usage = (accountId: string) => getUsage(store.db, { accountId, now: clock.now(), plans });

  it('refuses a count that does not fit as a whole, and counts nothing', async () => {
    const id = await account('free', 100);
    await consumeQuota(store.db, { accountId: id, count: 60, now: clock.now(), plans });
    await expect(
      consumeQuota(store.db, { accountId: id, count: 41, now: clock.now(), plans }),
    ).rejects.toMatchObject({
      code: 'quota_exceeded',
      details: { remaining: 40, limit: 100 },
    });
    expect((await usage(id)).quota).toMatchObject({ used: 60, remaining: 40 });
    await consumeQuota(store.db, { accountId: id, count: 40, now: clock.now(), plans });
    expect((await usage(id)).quota).toMatchObject({ used: 100, remaining: 0 });
  });

  it('with overage counts everything and puts the part beyond the quota in overage', async () => {
    const id = await account('growth', 100);
    const a = await consumeQuota(store.db, { accountId: id, count: 90, now: clock.now(), plans });
    expect(a).toMatchObject({
      used: 90,
      overageCount: 0,
      limit: 100,
      periodStart: '2026-05-05T00:00:00.000Z',
    });
    const b = await consumeQuota(store.db, { accountId: id, count: 25, now: clock.now(), plans });
    expect(b).toMatchObject({ used: 115, overageCount: 15 });
    const c = await consumeQuota(store.db, { accountId: id, count: 5, now: clock.now(), plans });
    expect(c).toMatchObject({ used: 120, overageCount: 20 });
  });

  it('refunds into the period it was counted in, overage first, never below zero', async () => {
    const id = await account('growth', 100);
    const { periodStart } = await consumeQuota(store.db, {
      accountId: id,
      count: 130,
      now: clock.now(),
      plans,
    });
    clock.set('2026-06-10T00:00:00.000Z'); // the next period: the refund still goes to May's
    await refundQuota(store.db, { accountId: id, count: 20, periodStart });
    clock.set('2026-05-20T00:00:00.000Z');
    expect((await usage(id)).quota.used).toBe(110);
    expect((await usage(id)).overage.current_overage_count).toBe(10);
    await refundQuota(store.db, { accountId: id, count: 500, periodStart });
    expect((await usage(id)).quota.used).toBe(0);
    expect((await usage(id)).overage.current_overage_count).toBe(0);
  });

  it('never overspends under concurrent batches', async () => {
    const id = await account('free', 1000);
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () =>
        consumeQuota(store.db, { accountId: id, count: 70, now: clock.now(), plans }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBe(14);
    expect((await usage(id)).quota.used).toBe(980);
  });
});
