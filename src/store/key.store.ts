/** SQL for the `api_keys` table. */
import type { CompiledQuery } from 'kysely';
import type { Executor } from './executor.js';
import type { ApiKeyRow, NewApiKeyRow } from './schema/accounts.schema.js';

/** A key joined with what authentication needs of its account, in one indexed query. */
export interface KeyWithAccount extends ApiKeyRow {
  account_plan: string;
  account_rate_limit: number | null;
  /** The account's own monthly quota (null: its plan's); a publishable key's default cap follows it. */
  account_quota_limit: number | null;
  /** The account's suspension (docs/operators.md): null while it is active. */
  account_suspended_at: string | null;
  account_suspended_reason: string | null;
}

/**
 * Inserts a key unless the account already holds `maxActive` active keys, in one statement
 * (INSERT ... SELECT ... WHERE count < max). Returns undefined when the limit is reached. Alone,
 * this is safe only where writers are serialised (SQLite); the backend's insertKeyWithinLimit
 * (store/backend.ts) is what callers use.
 */
export async function insertKeyIfBelow(
  db: Executor,
  row: NewApiKeyRow,
  maxActive: number,
): Promise<ApiKeyRow | undefined> {
  return db
    .insertInto('api_keys')
    .columns([
      'id',
      'account_id',
      'kind',
      'name',
      'prefix',
      'key_hash',
      'last4',
      'scopes',
      'created_at',
      'publishable',
      'allowed_origins',
      'visitor_rate_limit',
      'key_rate_limit',
      'daily_cap',
    ])
    .expression(
      db
        .selectNoFrom((eb) => [
          eb.val(row.id).as('id'),
          eb.val(row.account_id).as('account_id'),
          eb.val(row.kind).as('kind'),
          eb.val(row.name ?? null).as('name'),
          eb.val(row.prefix).as('prefix'),
          eb.val(row.key_hash).as('key_hash'),
          eb.val(row.last4).as('last4'),
          eb.val(row.scopes).as('scopes'),
          eb.val(row.created_at).as('created_at'),
          eb.val(row.publishable ?? 0).as('publishable'),
          eb.val(row.allowed_origins ?? null).as('allowed_origins'),
          eb.val(row.visitor_rate_limit ?? null).as('visitor_rate_limit'),
          eb.val(row.key_rate_limit ?? null).as('key_rate_limit'),
          eb.val(row.daily_cap ?? null).as('daily_cap'),
        ])
        .where(
          (eb) =>
            eb
              .selectFrom('api_keys')
              .select((s) => s.fn.countAll<number>().as('n'))
              .where('account_id', '=', row.account_id)
              .where('revoked_at', 'is', null),
          '<',
          maxActive,
        ),
    )
    .returningAll()
    .executeTakeFirst();
}

function keyByHashQuery(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .selectAll('api_keys')
    .select([
      'accounts.plan as account_plan',
      'accounts.rate_limit as account_rate_limit',
      'accounts.quota_limit as account_quota_limit',
      'accounts.suspended_at as account_suspended_at',
      'accounts.suspended_reason as account_suspended_reason',
    ])
    .where('api_keys.key_hash', '=', keyHash);
}

/** Compiled once per executor: this lookup runs on every authenticated request. */
const compiledKeyByHash = new WeakMap<Executor, CompiledQuery<KeyWithAccount>>();

/** The key with this hash and its account's plan, revoked or not (the caller tells them apart). */
export async function findKeyByHash(db: Executor, keyHash: string): Promise<KeyWithAccount | undefined> {
  let compiled = compiledKeyByHash.get(db);
  if (!compiled) {
    compiled = keyByHashQuery(db, '').compile();
    compiledKeyByHash.set(db, compiled);
  }
  const result = await db.executeQuery<KeyWithAccount>({ ...compiled, parameters: [keyHash] });
  return result.rows[0];
}

export async function findKeyById(db: Executor, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listKeysByAccount(db: Executor, accountId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Marks a key revoked (idempotent: an already revoked key keeps its first revocation time). */
export async function revokeKey(db: Executor, id: string, at: string): Promise<ApiKeyRow | undefined> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
  return findKeyById(db, id);
}

/** The allowed origins of every active publishable key of an active account (space-separated, one row per key). */
export async function activePublishableOrigins(db: Executor): Promise<string[]> {
  // A suspended account's keys count as revoked ones: its pages get no preflight (issue 26).
  const rows = await db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select('api_keys.allowed_origins')
    .where('api_keys.publishable', '=', 1)
    .where('api_keys.revoked_at', 'is', null)
    .where('accounts.suspended_at', 'is', null)
    .execute();
  return rows.flatMap((r) => (r.allowed_origins === null ? [] : [r.allowed_origins]));
}

/**
 * Counts one verification of a key on `day` unless it already counted `cap` that day, in one
 * statement (INSERT ... ON CONFLICT DO UPDATE ... WHERE used < cap): concurrent requests of every
 * process cannot pass the cap together. Returns the day's count with this one, or undefined when
 * the cap was reached.
 */
export async function countKeyDay(
  db: Executor,
  keyId: string,
  day: string,
  cap: number,
): Promise<number | undefined> {
  if (cap <= 0) return undefined;
  const row = await db
    .insertInto('api_key_days')
    .values({ key_id: keyId, day, used: 1 })
    .onConflict((oc) =>
      oc
        .columns(['key_id', 'day'])
        .doUpdateSet((eb) => ({ used: eb('api_key_days.used', '+', 1) }))
        .where('api_key_days.used', '<', cap),
    )
    .returning('used')
    .executeTakeFirst();
  return row?.used;
}

/** What the account's active publishable keys counted on `day` (keys that counted nothing are absent). */
export async function publishableKeyDays(
  db: Executor,
  accountId: string,
  day: string,
): Promise<(ApiKeyRow & { used: number })[]> {
  return db
    .selectFrom('api_keys')
    .innerJoin('api_key_days', 'api_key_days.key_id', 'api_keys.id')
    .selectAll('api_keys')
    .select('api_key_days.used')
    .where('api_keys.account_id', '=', accountId)
    .where('api_keys.publishable', '=', 1)
    .where('api_keys.revoked_at', 'is', null)
    .where('api_key_days.day', '=', day)
    .orderBy('api_keys.created_at')
    .orderBy('api_keys.id')
    .execute();
}
