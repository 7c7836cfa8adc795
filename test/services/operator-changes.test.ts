/**
 * The operator's account changes as whole use cases (issue 28): `accounts create` writes the
 * account, its owner's invitation and the invitation's security-log entry, and a suspension its
 * `account_suspended` entry, in one transaction, in the service, so that a caller that fails
 * afterwards leaves none of them behind.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount, getAccount } from '../../src/services/accounts/accounts.service.js';
import { listAudit } from '../../src/services/accounts/audit.service.js';
import {
  CLI_OPERATOR,
  changeOperatorAccount,
} from '../../src/services/operators/operator-accounts.service.js';
import { createOwnedAccount, type MembersDeps } from '../../src/services/people/members.service.js';
import { DEFAULT_PLANS } from '../../src/services/usage/plans.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

describe.each(testBackends())('operator changes with their log entries (%s)', (backend) => {
  let store: TestStore;
  const clock = new ManualClock();
  const logger = pino({ level: 'silent' });
  beforeEach(async () => {
    store = await openTestStore(backend);
  });
  afterEach(async () => {
    await store.close();
  });

  const count = async (table: 'accounts' | 'audit_log' | 'members') =>
    Number(
      (
        await store.db
          .selectFrom(table)
          .select((e) => e.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const membersDeps = (): MembersDeps => ({
    db: store.db,
    clock,
    config: { publicBaseUrl: 'http://127.0.0.1:8080' },
    mailer: null,
    logger,
  });

  it("creates an account with its owner's invitation and logs the invitation as the operator's", async () => {
    const created = await createOwnedAccount(membersDeps(), { email: 'owner@example.org' });
    const { entries } = await listAudit(store.db, created.accountId, {});
    expect(entries.map((e) => [e.type, e.actor.kind, e.details])).toEqual([
      [
        'invitation_created',
        'operator',
        { member_id: created.owner.member?.id ?? null, email: 'owner@example.org', new_link: true },
      ],
    ]);
  });

  it("writes neither the account, its invitation nor the entry when the caller's transaction rolls back", async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await createOwnedAccount({ ...membersDeps(), db: trx }, { email: 'owner@example.org' });
        throw new Error('the caller fails after the change');
      }),
    ).rejects.toThrow('the caller fails');
    expect(await count('accounts')).toBe(0);
    expect(await count('members')).toBe(0);
    expect(await count('audit_log')).toBe(0);
  });

  it("leaves the account running and its log empty when a suspension's caller rolls back", async () => {
    const accountId = (await createAccount(store.db, clock, { email: 'owner@example.org' })).id;
    await expect(
      store.db.transaction().execute(async (trx) => {
        await changeOperatorAccount(
          { db: trx, clock, plans: DEFAULT_PLANS, logger },
          CLI_OPERATOR,
          accountId,
          { suspended: true, reason: 'unpaid' },
        );
        throw new Error('the caller fails after the change');
      }),
    ).rejects.toThrow('the caller fails');
    expect((await getAccount(store.db, accountId)).suspended_at).toBeNull();
    expect(await count('audit_log')).toBe(0);
  });
});
