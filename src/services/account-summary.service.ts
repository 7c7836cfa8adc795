/** Everything about one account in one object: `mailverdict accounts show`. */
import type { Clock } from '../clock.js';
import type { Executor } from '../store/executor.js';
import { getAccount, toAccountView, type AccountView } from './accounts.service.js';
import { listKeys, type KeyView } from './keys.service.js';
import type { PlanTable } from './plans.js';
import { getUsage, getUsageHistory, type AccountUsage } from './usage.service.js';
import { webhookSecretFor } from './webhooks/secret.js';

/** Later issues add fields here (e.g. the account's webhook secret). */
export interface AccountSummary extends AccountView {
  usage: AccountUsage;
  usage_history: Awaited<ReturnType<typeof getUsageHistory>>;
  keys: KeyView[];
  /** Signs this account's webhooks (docs/webhooks.md). */
  webhook_secret: string;
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
    webhook_secret: await webhookSecretFor(db, accountId),
  };
}
