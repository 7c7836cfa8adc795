/**
 * The operator console's use cases (docs/operators.md): every account with its plan, usage this
 * period, keys, members, creation date and state; changing one (plan, own limits, overage,
 * suspension) through `changeAccount`, the code the CLI's `accounts` commands use; creating one
 * with its owner's invitation, as `accounts create` does. Every change is recorded in the
 * account's security log with the operator as its actor, and in one structured log line; and
 * everything about one account in one object (`mailverdict accounts show`).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { listAccountsWithCounts, type AccountWithCounts } from '../../store/operator.store.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import {
  changeAccount,
  getAccount,
  toAccountView,
  type AccountChanges,
  type AccountView,
} from '../accounts/accounts.service.js';
import { recordAudit, type AuditDetails, type AuditEventType } from '../accounts/audit.service.js';
import { issueOwnedAccount, mailLink, type MembersDeps, type SentLink } from '../people/members.service.js';
import { accountLimits, type PlanSlug, type PlanTable } from '../usage/plans.js';
import { listKeys, type KeyView } from '../keys/keys.service.js';
import { getUsage, getUsageHistory, type AccountUsage } from '../usage/usage.service.js';

/** Accounts the console lists at most (newest first). */
export const MAX_LISTED_ACCOUNTS = 1000;

/** Who acts: a signed-in operator (the console), or the CLI on the store's host (both null). */
export interface OperatorActor {
  id: string | null;
  email: string | null;
}

/** The CLI: whoever can run `mailverdict` against the store. */
export const CLI_OPERATOR: OperatorActor = Object.freeze({ id: null, email: null });

/** An account as the console shows it. */
export interface OperatorAccount {
  id: string;
  email: string;
  plan: PlanSlug;
  quota_limit: number | null;
  rate_limit: number | null;
  overage_enabled: boolean;
  /** Whether overage is the account's own setting rather than its plan's. */
  overage_own: boolean;
  usage: {
    period_start: string;
    period_end: string;
    used: number;
    limit: number | null;
    overage_count: number;
  };
  keys: number;
  members: number;
  created_at: string;
  suspended: boolean;
  suspended_at: string | null;
  suspended_reason: string | null;
}

export interface OperatorDeps {
  db: Executor;
  clock: Clock;
  plans: PlanTable;
  logger: Pick<Logger, 'info'>;
}

async function toOperatorAccount(
  deps: Pick<OperatorDeps, 'db' | 'clock' | 'plans'>,
  row: AccountWithCounts,
): Promise<OperatorAccount> {
  const usage = await getUsage(deps.db, { accountId: row.id, now: deps.clock.now(), plans: deps.plans });
  const limits = accountLimits(deps.plans, row);
  // The account's own view, with overage as it applies (the account's setting, else its plan's).
  return {
    ...toAccountView(row),
    overage_enabled: limits.overageEnabled,
    overage_own: row.overage_enabled !== null,
    usage: {
      period_start: usage.period_start,
      period_end: usage.period_end,
      used: usage.quota.used,
      limit: usage.quota.limit,
      overage_count: usage.overage.current_overage_count,
    },
    keys: row.active_keys,
    members: row.members,
    suspended: row.suspended_at !== null,
  };
}

/** Every account (up to MAX_LISTED_ACCOUNTS, newest first). */
export async function listOperatorAccounts(
  deps: Pick<OperatorDeps, 'db' | 'clock' | 'plans'>,
): Promise<OperatorAccount[]> {
  const rows = await listAccountsWithCounts(deps.db, { limit: MAX_LISTED_ACCOUNTS });
  const out: OperatorAccount[] = [];
  for (const row of rows) out.push(await toOperatorAccount(deps, row));
  return out;
}

async function oneOperatorAccount(
  deps: Pick<OperatorDeps, 'db' | 'clock' | 'plans'>,
  id: string,
): Promise<OperatorAccount> {
  const [row] = await listAccountsWithCounts(deps.db, { limit: 1, id });
  if (!row) throw new AppError('not_found', `no account ${id}`);
  return toOperatorAccount(deps, row);
}

/** Records an operator's action: the account's security log and one structured log line. */
async function recordOperatorAction(
  deps: OperatorDeps,
  operator: OperatorActor,
  accountId: string,
  type: AuditEventType,
  details: AuditDetails,
): Promise<void> {
  const by = { operator_id: operator.id ?? 'cli', operator_email: operator.email };
  await recordAudit(deps.db, deps.clock, {
    accountId,
    type,
    actor: { kind: 'operator' },
    details: { ...details, ...by },
  });
  // No address in the info line (docs/security.md): the operator's id names them.
  const { email: _email, ...logged } = details;
  deps.logger.info(
    { operator_id: by.operator_id, account_id: accountId, action: type, ...logged },
    'operator action',
  );
}

/** The audit details of a change: the fields it set, as given. */
function changeDetails(changes: AccountChanges): AuditDetails {
  const details: Record<string, string | number | boolean | null> = {};
  if (changes.plan !== undefined) details.plan = changes.plan;
  if (changes.quotaLimit !== undefined) details.quota_limit = changes.quotaLimit;
  if (changes.rateLimit !== undefined) details.rate_limit = changes.rateLimit;
  if (changes.overageEnabled !== undefined) details.overage_enabled = changes.overageEnabled;
  return details;
}

/**
 * Changes an account as the CLI's `accounts set-plan|suspend|resume` do, in one update, and
 * records it in the same transaction: `account_changed` for plan, limits and overage,
 * `account_suspended` (with the reason) or `account_resumed` for the state.
 */
export async function changeOperatorAccount(
  deps: OperatorDeps,
  operator: OperatorActor,
  accountId: string,
  changes: AccountChanges,
): Promise<OperatorAccount> {
  // The change and its entries commit together, or neither does.
  await inTransaction(deps.db, async (trx) => {
    const inTrx = { ...deps, db: trx };
    const before = await getAccount(trx, accountId);
    const after = await changeAccount(trx, deps.clock, accountId, changes);
    const details = changeDetails(changes);
    if (Object.keys(details).length > 0)
      await recordOperatorAction(inTrx, operator, accountId, 'account_changed', details);
    if (changes.suspended === true)
      await recordOperatorAction(inTrx, operator, accountId, 'account_suspended', {
        reason: after.suspended_reason,
        already: before.suspended_at !== null,
      });
    if (changes.suspended === false && before.suspended_at !== null)
      await recordOperatorAction(inTrx, operator, accountId, 'account_resumed', {
        suspended_at: before.suspended_at,
      });
  });
  return oneOperatorAccount(deps, accountId);
}

/** A new account and its owner's one-time invitation link, as `accounts create` makes them. */
export async function createOperatorAccount(
  deps: OperatorDeps & MembersDeps,
  operator: OperatorActor,
  input: { email: string; plan?: string; quotaLimit?: number | null; rateLimit?: number | null },
): Promise<{ account: OperatorAccount; owner: SentLink }> {
  // The account, the invitation and both entries commit together; the link goes out after.
  const created = await inTransaction(deps.db, async (trx) => {
    const made = await issueOwnedAccount(trx, deps.clock, input);
    const inTrx = { ...deps, db: trx };
    await recordOperatorAction(inTrx, operator, made.accountId, 'account_created', {
      plan: input.plan ?? 'free',
    });
    await recordOperatorAction(inTrx, operator, made.accountId, 'invitation_created', {
      member_id: made.issued.member?.id ?? null,
      email: made.issued.email,
      new_link: true,
    });
    return made;
  });
  const owner = await mailLink(deps, 'invitation', created.issued);
  return { account: await oneOperatorAccount(deps, created.accountId), owner };
}

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
