/**
 * Accounts: creation, changes (plan, own limits, overage, suspension: the CLI's `accounts`
 * commands and the operator console share `changeAccount`) and the account view of the CLI.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { countAccounts, findAccountById, insertAccount, updateAccount } from '../../store/account.store.js';
import type { Executor } from '../../store/executor.js';
import type { AccountRow, AccountUpdate } from '../../store/schema/accounts.schema.js';
import { newId } from '../ids.js';
import { PLAN_SLUGS, isPlanSlug, type PlanSlug } from '../usage/plans.js';
import { refuseControlCharacters } from '../text.js';

/** What the CLI prints for an account. Later issues add fields (e.g. the webhook secret). */
export interface AccountView {
  id: string;
  email: string;
  plan: PlanSlug;
  quota_limit: number | null;
  rate_limit: number | null;
  /** The account's own overage switch; null: its plan's. */
  overage_enabled: boolean | null;
  created_at: string;
  /** When an operator suspended it (docs/operators.md); null: active. */
  suspended_at: string | null;
  suspended_reason: string | null;
}

export function toAccountView(row: AccountRow): AccountView {
  return {
    id: row.id,
    email: row.email,
    plan: isPlanSlug(row.plan) ? row.plan : 'free',
    quota_limit: row.quota_limit,
    rate_limit: row.rate_limit,
    overage_enabled: row.overage_enabled === null ? null : row.overage_enabled === 1,
    created_at: row.created_at,
    suspended_at: row.suspended_at,
    suspended_reason: row.suspended_reason,
  };
}

function checkPlan(plan: string): PlanSlug {
  if (!isPlanSlug(plan))
    throw new AppError('invalid_request', `plan must be one of ${PLAN_SLUGS.join(', ')}, got "${plan}"`);
  return plan;
}

function checkPositive(name: string, value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isSafeInteger(value) || value < 0 || (name === 'rate limit' && value < 1))
    throw new AppError(
      'invalid_request',
      `${name} must be a ${name === 'rate limit' ? 'positive' : 'non-negative'} integer, got ${value}`,
    );
  return value;
}

export interface NewAccount {
  email: string;
  plan?: string;
  quotaLimit?: number | null;
  rateLimit?: number | null;
}

/** Creates an account; its creation day anchors its billing periods. */
export async function createAccount(db: Executor, clock: Clock, input: NewAccount): Promise<AccountRow> {
  refuseControlCharacters('email', input.email);
  const email = input.email.trim();
  if (!/^[^@\s]+@[^@\s]+$/.test(email))
    throw new AppError('invalid_request', `email must be an e-mail address, got "${email}"`);
  const now = clock.now().toISOString();
  return insertAccount(db, {
    id: newId('acct'),
    email,
    plan: checkPlan(input.plan ?? 'free'),
    quota_limit: checkPositive('quota limit', input.quotaLimit),
    rate_limit: checkPositive('rate limit', input.rateLimit),
    created_at: now,
    updated_at: now,
  });
}

export async function getAccount(db: Executor, id: string): Promise<AccountRow> {
  const row = await findAccountById(db, id);
  if (!row) throw new AppError('not_found', `no account ${id}`);
  return row;
}

/** The longest reason a suspension keeps (it is shown to the account's members). */
export const MAX_SUSPENSION_REASON = 500;

/** What may change of an account; absent: unchanged, null (limits, overage): back to the plan's. */
export interface AccountChanges {
  plan?: string;
  quotaLimit?: number | null;
  rateLimit?: number | null;
  overageEnabled?: boolean | null;
  /** true: suspends (keys refused, jobs paused; docs/operators.md); false: resumes. */
  suspended?: boolean;
  /** The suspension's reason, shown to the account's members; only with `suspended: true`. */
  reason?: string | null;
}

function checkReason(reason: string | null | undefined): string | null {
  if (reason === undefined || reason === null || reason.trim() === '') return null;
  refuseControlCharacters('reason', reason);
  if (reason.length > MAX_SUSPENSION_REASON)
    throw new AppError('invalid_request', `reason must be at most ${MAX_SUSPENSION_REASON} characters`);
  return reason.trim();
}

/**
 * Changes an account in one update; every change takes effect on its next request, in every
 * process (the key cache follows the store's change token). Suspending an account already
 * suspended keeps its first time and takes the new reason; resuming an active one changes nothing.
 */
export async function changeAccount(
  db: Executor,
  clock: Clock,
  id: string,
  changes: AccountChanges,
): Promise<AccountRow> {
  const now = clock.now().toISOString();
  const update: AccountUpdate = { updated_at: now };
  if (changes.plan !== undefined) update.plan = checkPlan(changes.plan);
  if (changes.quotaLimit !== undefined) update.quota_limit = checkPositive('quota limit', changes.quotaLimit);
  if (changes.rateLimit !== undefined) update.rate_limit = checkPositive('rate limit', changes.rateLimit);
  if (changes.overageEnabled !== undefined)
    update.overage_enabled = changes.overageEnabled === null ? null : changes.overageEnabled ? 1 : 0;
  if (changes.reason !== undefined && changes.suspended !== true)
    throw new AppError('invalid_request', 'reason goes with suspended: true only');
  if (changes.suspended === true) {
    const current = await getAccount(db, id);
    update.suspended_at = current.suspended_at ?? now;
    update.suspended_reason = checkReason(changes.reason);
  } else if (changes.suspended === false) {
    update.suspended_at = null;
    update.suspended_reason = null;
  }
  const row = await updateAccount(db, id, update);
  if (!row) throw new AppError('not_found', `no account ${id}`);
  return row;
}

/** Moves an account to another plan; takes effect on its next request. */
export async function setAccountPlan(
  db: Executor,
  clock: Clock,
  id: string,
  plan: string,
): Promise<AccountRow> {
  return changeAccount(db, clock, id, { plan });
}

/** Sets or clears (null) the account's own quota and rate limit. */
export async function setAccountLimits(
  db: Executor,
  clock: Clock,
  id: string,
  limits: { quotaLimit?: number | null; rateLimit?: number | null },
): Promise<AccountRow> {
  return changeAccount(db, clock, id, limits);
}

/** Suspended accounts refuse new work from the dashboard as well (keys, lists, verifications). */
export async function refuseIfSuspended(db: Executor, accountId: string): Promise<void> {
  const account = await getAccount(db, accountId);
  if (account.suspended_at !== null)
    throw new AppError(
      'account_suspended',
      `this account is suspended${account.suspended_reason ? `: ${account.suspended_reason}` : ''}`,
    );
}

export async function hasAnyAccount(db: Executor): Promise<boolean> {
  return (await countAccounts(db)) > 0;
}
