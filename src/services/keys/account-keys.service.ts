/**
 * API keys as the dashboard manages them: the account's keys with their last use, creation,
 * revocation and rotation. Creation and revocation are keys.service.ts's (the 10-key limit, the
 * revocation the key cache sees at once in every process); a key of another account is
 * `not_found`, exactly as an unknown id.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import { lastUsesOfAccountKeys } from '../../store/key-usage.store.js';
import { findKeyById } from '../../store/key.store.js';
import {
  createKeyBy,
  listKeys,
  MAX_ACTIVE_KEYS,
  revokeKeyBy,
  rotateKeyBy,
  SCOPES,
  type KeyChangeBy,
  toKeyView,
  type KeyView,
  type Scope,
} from './keys.service.js';
import type { PublishableDefaults } from '../../config.js';
import { accountMonthlyQuota } from './key-cap.service.js';
import type { PlanTable } from '../usage/plans.js';
import { dailyCapCost, type DailyCapCost, type PublishableOptions } from './publishable-keys.js';

/** A key as the dashboard lists it: its view and its last use (never its secret). */
export interface AccountKey extends Omit<KeyView, 'account_id' | 'last4'> {
  last_used_at: string | null;
  /** A publishable key's cap and what one day at it costs the account; null for a secret key. */
  cap_cost: DailyCapCost | null;
}

/** What the keys' cap costs are computed from: the plans and the server's publishable defaults. */
export interface KeySpendDeps {
  plans: PlanTable;
  defaults: PublishableDefaults;
}

export interface AccountKeyList {
  keys: AccountKey[];
  active: number;
  limit: number;
  scopes: Scope[];
}

export interface NewAccountKey {
  name: string;
  kind: KeyView['kind'];
  /** Checked by keys.service.ts (an unknown scope is `invalid_request`). */
  scopes: readonly string[];
  /** A publishable key (docs/widget.md): its origins and limits, checked by publishable-keys.ts. */
  publishable?: PublishableOptions;
}

/** A created or rotated key: the only answer that carries the secret. */
export interface CreatedAccountKey {
  key: AccountKey;
  secret: string;
  /** Rotation: the key this one replaces. */
  replaces?: string;
  /** A publishable key whose cap times 30 days exceeds the monthly quota: what to tell its creator. */
  warning: string | null;
}

function toKeyItem(
  view: KeyView,
  lastUsedAt: string | null,
  quota: number | null,
  spend: KeySpendDeps,
): AccountKey {
  return {
    id: view.id,
    name: view.name,
    kind: view.kind,
    scopes: view.scopes,
    display: view.display,
    status: view.status,
    created_at: view.created_at,
    last_used_at: lastUsedAt,
    revoked_at: view.revoked_at,
    publishable: view.publishable,
    allowed_origins: view.allowed_origins,
    visitor_rate_limit: view.visitor_rate_limit,
    key_rate_limit: view.key_rate_limit,
    daily_cap: view.daily_cap,
    cap_cost: view.publishable ? dailyCapCost(view.daily_cap, spend.defaults, quota) : null,
  };
}

/** The account's keys, newest first, revoked ones included. */
export async function listKeyItems(
  db: Executor,
  spend: KeySpendDeps,
  accountId: string,
): Promise<AccountKeyList> {
  const views = await listKeys(db, accountId);
  const lastUses = await lastUsesOfAccountKeys(db, accountId);
  const quota = await accountMonthlyQuota(db, spend.plans, accountId);
  const keys = views
    .map((v) => toKeyItem(v, lastUses.get(v.id) ?? null, quota, spend))
    .sort((a, b) =>
      a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at),
    );
  return {
    keys,
    active: keys.filter((k) => k.status === 'active').length,
    limit: MAX_ACTIVE_KEYS,
    scopes: [...SCOPES],
  };
}

export async function createKeyItem(
  db: Executor,
  clock: Clock,
  spend: KeySpendDeps,
  accountId: string,
  body: NewAccountKey,
  by: KeyChangeBy,
): Promise<CreatedAccountKey> {
  const { key, record } = await createKeyBy(
    db,
    clock,
    {
      accountId,
      kind: body.kind,
      scopes: body.scopes,
      name: body.name,
      ...(body.publishable === undefined ? {} : { publishable: body.publishable }),
    },
    by,
  );
  return created(record, key, await accountMonthlyQuota(db, spend.plans, accountId), spend);
}

function created(
  record: KeyView,
  secret: string,
  quota: number | null,
  spend: KeySpendDeps,
): CreatedAccountKey {
  const item = toKeyItem(record, null, quota, spend);
  return { key: item, secret, warning: item.cap_cost?.warning ?? null };
}

async function requireAccountKey(db: Executor, accountId: string, keyId: string): Promise<KeyView> {
  const row = await findKeyById(db, keyId);
  if (!row || row.account_id !== accountId) throw new AppError('not_found', `no key ${keyId}`);
  return toKeyView(row);
}

/** Revokes the key: refused from the next API request on, in every process. */
export async function revokeAccountKey(
  db: Executor,
  clock: Clock,
  spend: KeySpendDeps,
  accountId: string,
  keyId: string,
  by: KeyChangeBy,
): Promise<AccountKey> {
  await requireAccountKey(db, accountId, keyId);
  const view = await revokeKeyBy(db, clock, keyId, by);
  const lastUses = await lastUsesOfAccountKeys(db, accountId);
  const quota = await accountMonthlyQuota(db, spend.plans, accountId);
  return toKeyItem(view, lastUses.get(view.id) ?? null, quota, spend);
}

/**
 * Creates a replacement with the key's name, kind, scopes (and a publishable key's origins and limits); the old key stays active until
 * the user revokes it (once the new secret is in place). Needs a free slot under the limit.
 */
export async function rotateAccountKey(
  db: Executor,
  clock: Clock,
  spend: KeySpendDeps,
  accountId: string,
  keyId: string,
  by: KeyChangeBy,
): Promise<CreatedAccountKey> {
  const old = await requireAccountKey(db, accountId, keyId);
  const { key, record } = await rotateKeyBy(db, clock, old, by);
  return {
    ...created(record, key, await accountMonthlyQuota(db, spend.plans, accountId), spend),
    replaces: old.id,
  };
}
