/** Accounts: creation, plan changes and the account view used by the CLI. */
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { countAccounts, findAccountById, insertAccount, updateAccount } from '../store/account.store.js';
import type { Executor } from '../store/executor.js';
import type { AccountRow } from '../store/schema/accounts.schema.js';
import { newId } from './ids.js';
import { PLAN_SLUGS, isPlanSlug, type PlanSlug } from './plans.js';
import { refuseControlCharacters } from './text.js';

/** What the CLI prints for an account. Later issues add fields (e.g. the webhook secret). */
export interface AccountView {
  id: string;
  email: string;
  plan: PlanSlug;
  quota_limit: number | null;
  rate_limit: number | null;
  created_at: string;
}

export function toAccountView(row: AccountRow): AccountView {
  return {
    id: row.id,
    email: row.email,
    plan: isPlanSlug(row.plan) ? row.plan : 'free',
    quota_limit: row.quota_limit,
    rate_limit: row.rate_limit,
    created_at: row.created_at,
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

/** Moves an account to another plan; takes effect on its next request. */
export async function setAccountPlan(
  db: Executor,
  clock: Clock,
  id: string,
  plan: string,
): Promise<AccountRow> {
  const row = await updateAccount(db, id, { plan: checkPlan(plan), updated_at: clock.now().toISOString() });
  if (!row) throw new AppError('not_found', `no account ${id}`);
  return row;
}

/** Sets or clears (null) the account's own quota and rate limit. */
export async function setAccountLimits(
  db: Executor,
  clock: Clock,
  id: string,
  limits: { quotaLimit?: number | null; rateLimit?: number | null },
): Promise<AccountRow> {
  const changes: { quota_limit?: number | null; rate_limit?: number | null; updated_at: string } = {
    updated_at: clock.now().toISOString(),
  };
  if (limits.quotaLimit !== undefined) changes.quota_limit = checkPositive('quota limit', limits.quotaLimit);
  if (limits.rateLimit !== undefined) changes.rate_limit = checkPositive('rate limit', limits.rateLimit);
  const row = await updateAccount(db, id, changes);
  if (!row) throw new AppError('not_found', `no account ${id}`);
  return row;
}

export async function hasAnyAccount(db: Executor): Promise<boolean> {
  return (await countAccounts(db)) > 0;
}
