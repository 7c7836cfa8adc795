/** The account's webhook signing secret, created on first use (first `accounts show` or first delivery). */
import { AppError } from '../../errors.js';
import { getOrCreateWebhookSecret } from '../../store/delivery.store.js';
import type { Executor } from '../../store/executor.js';
import { newWebhookSecret } from './sign.js';

export async function webhookSecretFor(db: Executor, accountId: string): Promise<string> {
  const secret = await getOrCreateWebhookSecret(db, accountId, newWebhookSecret());
  if (secret === null) throw new AppError('not_found', `no account ${accountId}`);
  return secret;
}
