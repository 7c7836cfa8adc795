/** Everything about one account in one object: `mailverdict accounts show`. */
import type { Clock } from '../clock.js';
import type { Executor } from '../store/executor.js';
import { getAccount, toAccountView, type AccountView } from './accounts.service.js';
import { listKeys, type KeyView } from './keys.service.js';
import type { PlanTable } from './plans.js';
import { getUsage, getUsageHistory, type AccountUsage } from './usage.service.js';

/**
 * Usage and keys, never a secret (issue 25): the webhook signing secret is read on the
 * dashboard's settings page, whose reveal is written to the security log.
 */
export interface AccountSummary extends AccountView {
  usage: AccountUsage;
  usage_history: Awaited<ReturnType<typeof getUsageHistory>>;
  keys: KeyView[];
}

export async function accountSummary(
  db: Executor,
  clock: Clock,
  plans: PlanTable,
  accountId: string,
): Promise<AccountSummary> {
  const account = toAccountView(await getAccount(db, accountId));
  return {
    ...account,
    usage: await getUsage(db, { accountId, now: clock.now(), plans }),
    usage_history: await getUsageHistory(db, accountId),
    keys: await listKeys(db, accountId),
  };
}
