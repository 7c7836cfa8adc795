/** SQL for what the dashboard's settings page changes on an account besides its address. */
import { storeSecrets } from './backend.js';
import type { Executor } from './executor.js';

/** Sets the account's webhook signing secret (a rotation from the dashboard). */
export async function setWebhookSecret(db: Executor, accountId: string, secret: string): Promise<boolean> {
  const res = await db
    .updateTable('accounts')
    .set({ webhook_secret: storeSecrets(db).seal('accounts.webhook_secret', secret) })
    .where('id', '=', accountId)
    .executeTakeFirst();
  return res.numUpdatedRows === 1n;
}
