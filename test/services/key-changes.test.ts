/**
 * A key change as a person makes it (issue 28: use cases whole in services): the suspension
 * check, the change and its security-log entry happen in one transaction, in the service, so
 * that no edge can do one without the other.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { listAudit } from '../../src/services/accounts/audit.service.js';
import {
  createKeyBy,
  getKey,
  revokeKeyBy,
  rotateKeyBy,
  type KeyChangeBy,
} from '../../src/services/keys/keys.service.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const MEMBER: KeyChangeBy = {
  actor: { kind: 'member', memberId: 'mem_1', email: 'owner@example.org' },
  origin: { clientIp: '192.0.2.9', userAgent: 'test' },
};
const OPERATOR: KeyChangeBy = { actor: { kind: 'operator' } };

describe.each(testBackends())('key changes with their log entries (%s)', (backend) => {
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

  const keyCount = async () =>
    Number(
      (
        await store.db
          .selectFrom('api_keys')
          .select((e) => e.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const logTypes = async () => (await listAudit(store.db, accountId, {})).entries.map((e) => e.type);

  it('logs a creation, a rotation and a revocation with who made them', async () => {
    const made = await createKeyBy(store.db, clock, { accountId, kind: 'live' }, MEMBER);
    clock.advance(1000);
    const rotated = await rotateKeyBy(store.db, clock, made.record, MEMBER);
    clock.advance(1000);
    await revokeKeyBy(store.db, clock, made.record.id, OPERATOR);
    const { entries } = await listAudit(store.db, accountId, {});
    expect(entries.map((e) => [e.type, e.actor.kind, e.details])).toEqual([
      ['key_revoked', 'operator', { key_id: made.record.id }],
      ['key_rotated', 'member', { key_id: rotated.record.id, replaces: made.record.id }],
      ['key_created', 'member', { key_id: made.record.id, kind: 'live' }],
    ]);
  });

  it("writes neither the key nor its entry when the caller's transaction rolls back", async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await createKeyBy(trx, clock, { accountId, kind: 'live' }, MEMBER);
        throw new Error('the caller fails after the change');
      }),
    ).rejects.toThrow('the caller fails');
    expect(await keyCount()).toBe(0);
    expect(await logTypes()).toEqual([]);
  });

  it("refuses a member's creation and rotation while the account is suspended, writing nothing; the operator's goes through", async () => {
    const made = await createKeyBy(store.db, clock, { accountId, kind: 'test' }, MEMBER);
    await store.db
      .updateTable('accounts')
      .set({ suspended_at: clock.now().toISOString(), suspended_reason: 'unpaid' })
      .where('id', '=', accountId)
      .execute();
    await expect(createKeyBy(store.db, clock, { accountId, kind: 'live' }, MEMBER)).rejects.toMatchObject({
      code: 'account_suspended',
    });
    await expect(rotateKeyBy(store.db, clock, made.record, MEMBER)).rejects.toMatchObject({
      code: 'account_suspended',
    });
    expect(await keyCount()).toBe(1);
    expect(await logTypes()).toEqual(['key_created']);

    clock.advance(1000);
    await createKeyBy(store.db, clock, { accountId, kind: 'live' }, OPERATOR);
    clock.advance(1000);
    // Revoking only takes away: a member may do it while suspended.
    await revokeKeyBy(store.db, clock, made.record.id, MEMBER);
    expect((await getKey(store.db, made.record.id)).status).toBe('revoked');
    expect(await logTypes()).toEqual(['key_revoked', 'key_created', 'key_created']);
  });
});
