/**
 * First start on a brand-new data directory: one account with a live and a test key, and its
 * owner's invitation to the dashboard (the account's address; docs/dashboard.md).
 */
import type { Clock } from '../clock.js';
import type { Executor } from '../store/executor.js';
import { createAccount, hasAnyAccount, toAccountView, type AccountView } from './accounts.service.js';
import { createKey, type KeyView } from './keys.service.js';
import { issueInvitation, type IssuedLink } from './members.service.js';

export interface Bootstrap {
  account: AccountView;
  live: { key: string; record: KeyView };
  test: { key: string; record: KeyView };
  /** The owner's one-time invitation (services/members.service.ts memberLink makes the link). */
  owner: IssuedLink;
}

/** Creates the first account and its two keys, unless the store already has an account. */
export async function bootstrapFirstAccount(
  db: Executor,
  clock: Clock,
  email = 'admin@localhost',
): Promise<Bootstrap | null> {
  return db.transaction().execute(async (trx) => {
    if (await hasAnyAccount(trx)) return null;
    const account = await createAccount(trx, clock, { email, plan: 'free' });
    const live = await createKey(trx, clock, {
      accountId: account.id,
      kind: 'live',
      name: 'bootstrap live key',
    });
    const test = await createKey(trx, clock, {
      accountId: account.id,
      kind: 'test',
      name: 'bootstrap test key',
    });
    const owner = await issueInvitation(trx, clock, { accountId: account.id, email, role: 'owner' });
    return { account: toAccountView(account), live, test, owner };
  });
}
