/**
 * The dashboard's settings: the account's notification address (the `email` of the account,
 * where job notifications go) and its webhook signing secret, revealed on demand and rotated.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { updateAccount } from '../../store/account.store.js';
import { setWebhookSecret } from '../../store/account-settings.store.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import { getAccount } from './accounts.service.js';
import { recordAudit, type ChangeBy } from './audit.service.js';
import { normalizeEmail } from '../people/members.service.js';
import { newWebhookSecret } from '../webhooks/sign.js';
import { webhookSecretFor } from '../webhooks/secret.js';

/** The settings page's values; the webhook secret itself only through `webhookSecretFor`. */
export interface AccountSettings {
  /** The account's id, which the command line asks for (`keys create --account`; issue 25). */
  account_id: string;
  notification_email: string;
  webhook_secret_hint: string;
  relay_configured: boolean;
}

/** Characters of the secret the settings page shows without revealing it. */
const HINT_LENGTH = 4;

export async function getSettings(
  db: Executor,
  accountId: string,
  relayConfigured: boolean,
): Promise<AccountSettings> {
  const account = await getAccount(db, accountId);
  const secret = await webhookSecretFor(db, accountId);
  return {
    account_id: account.id,
    notification_email: account.email,
    webhook_secret_hint: `…${secret.slice(-HINT_LENGTH)}`,
    relay_configured: relayConfigured,
  };
}

export async function setNotificationEmail(
  db: Executor,
  clock: Clock,
  accountId: string,
  email: string,
): Promise<void> {
  // Checked as a member's address is, but kept as written: a mailbox's local part may care about case.
  normalizeEmail(email);
  const row = await updateAccount(db, accountId, {
    email: email.trim(),
    updated_at: clock.now().toISOString(),
  });
  if (!row) throw new AppError('not_found', `no account ${accountId}`);
}

/**
 * A new signing secret: webhooks sent from now on are signed with it (receivers must switch;
 * docs/webhooks.md). Returns it.
 */
export async function rotateWebhookSecret(
  db: Executor,
  clock: Clock,
  accountId: string,
  by: ChangeBy,
): Promise<string> {
  const secret = newWebhookSecret();
  return inTransaction(db, async (trx) => {
    if (!(await setWebhookSecret(trx, accountId, secret)))
      throw new AppError('not_found', `no account ${accountId}`);
    await recordAudit(trx, clock, { accountId, type: 'webhook_secret_rotated', ...by });
    return secret;
  });
}

/** The account's webhook secret shown to a person, with the log entry that says who saw it. */
export async function revealWebhookSecret(
  db: Executor,
  clock: Clock,
  accountId: string,
  by: ChangeBy,
): Promise<string> {
  return inTransaction(db, async (trx) => {
    const secret = await webhookSecretFor(trx, accountId);
    await recordAudit(trx, clock, { accountId, type: 'webhook_secret_revealed', ...by });
    return secret;
  });
}
