/**
 * An outcomes upload as a person makes it (issue 28: use cases whole in services): the suspension
 * check, the events and the `outcomes_uploaded` entry in one transaction, in the service.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { listAudit, type ChangeBy } from '../../src/services/accounts/audit.service.js';
import { uploadOutcomes } from '../../src/services/outcomes/upload.service.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const MEMBER: ChangeBy = {
  actor: { kind: 'member', memberId: 'mem_1', email: 'owner@example.org' },
  origin: { clientIp: '192.0.2.9', userAgent: 'test' },
};
const CSV = Buffer.from(
  'email,type\nann@example.com,hard_bounce\nbob@example.com,delivered\nnot-an-address,hard_bounce\n',
);

describe.each(testBackends())('an outcomes upload with its log entry (%s)', (backend) => {
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
  const deps = (db = store.db) => ({ db, clock, retentionMs: 365 * 86_400_000 });
  const events = async () =>
    (await store.db.selectFrom('outcome_events').select('type').where('account_id', '=', accountId).execute())
      .length;
  const logged = async () =>
    (await listAudit(store.db, accountId, {})).entries.map((e) => [e.type, e.actor.kind, e.details]);

  it('stores the events and logs their counts, never an address', async () => {
    const report = await uploadOutcomes(deps(), { accountId, kind: 'csv', raw: CSV }, MEMBER);
    expect([report.taken, report.duplicates, report.refused]).toEqual([2, 0, 1]);
    expect(await events()).toBe(2);
    expect(await logged()).toEqual([
      ['outcomes_uploaded', 'member', { kind: 'csv', taken: 2, duplicates: 0, refused: 1 }],
    ]);
  });

  it("stores neither the events nor the entry when the caller's transaction rolls back", async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await uploadOutcomes(deps(trx), { accountId, kind: 'csv', raw: CSV }, MEMBER);
        throw new Error('the caller fails after the upload');
      }),
    ).rejects.toThrow('the caller fails');
    expect(await events()).toBe(0);
    expect(await logged()).toEqual([]);
  });

  it("refuses a member's upload while the account is suspended, storing nothing", async () => {
    await store.db
      .updateTable('accounts')
      .set({ suspended_at: clock.now().toISOString(), suspended_reason: 'unpaid' })
      .where('id', '=', accountId)
      .execute();
    await expect(uploadOutcomes(deps(), { accountId, kind: 'csv', raw: CSV }, MEMBER)).rejects.toMatchObject({
      code: 'account_suspended',
    });
    expect(await events()).toBe(0);
    expect(await logged()).toEqual([]);
  });
});
