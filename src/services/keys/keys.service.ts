/**
 * API keys. A key is `svc_live_` or `svc_test_` (publishable keys, docs/widget.md:
 * `svc_live_pub_` or `svc_test_pub_`) followed by 40 base62 characters from the CSPRNG
 * (238 bits). Only its SHA-256 is stored (a fast hash is right for high-entropy secrets), with
 * the prefix and the last four characters for display. A request's key is looked up by hash in
 * the store, or in a cache that empties whenever the store changes (services/keys/key-cache.ts), so a
 * revocation takes effect on the very next request, in every process.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { storeBackend } from '../../store/backend.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import {
  findKeyByHash,
  findKeyById,
  listKeysByAccount,
  revokeKey as revokeKeyRow,
} from '../../store/key.store.js';
import type { ApiKeyRow } from '../../store/schema/accounts.schema.js';
import { getAccount, refuseIfSuspended } from '../accounts/accounts.service.js';
import { recordAudit, type ChangeBy } from '../accounts/audit.service.js';
import { newId, randomBase62 } from '../ids.js';
import type { KeyCache } from './key-cache.js';
import {
  parsePublishableOptions,
  type PublishableOptions,
  type PublishableRules,
} from './publishable-keys.js';
import { refuseControlCharacters } from '../text.js';

/**
 * Every scope a key can have. A new key gets all of them unless it is given fewer; a key made
 * before a scope existed does not gain it (the outcome and filter scopes, docs/outcomes.md,
 * erase and suppress data: an older key is not silently allowed to).
 */
export const SCOPES = [
  'verify',
  'batch',
  'jobs:read',
  'usage:read',
  'outcomes:write',
  'outcomes:read',
  'filters:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const KEY_KINDS = ['live', 'test'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export const KEY_PREFIX: Readonly<Record<KeyKind, string>> = { live: 'svc_live_', test: 'svc_test_' };
/** The prefixes of publishable keys: the environment's prefix still holds (`svc_live_…`). */
export const PUBLISHABLE_KEY_PREFIX: Readonly<Record<KeyKind, string>> = {
  live: 'svc_live_pub_',
  test: 'svc_test_pub_',
};
export const MAX_ACTIVE_KEYS = 10;
const SECRET_LENGTH = 40;
/** Accepts secrets of 32-128 base62 characters (ours have 40), rejecting anything else unread. */
const KEY_FORMAT = /^svc_(live|test)_(pub_)?[0-9A-Za-z]{32,128}$/;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function isKeyKind(value: string): value is KeyKind {
  return (KEY_KINDS as readonly string[]).includes(value);
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What the CLI and listings show of a key: never the secret. */
export interface KeyView {
  id: string;
  account_id: string;
  kind: KeyKind;
  name: string | null;
  /** e.g. `svc_live_…a1B2` */
  display: string;
  last4: string;
  scopes: Scope[];
  status: 'active' | 'revoked';
  created_at: string;
  revoked_at: string | null;
  /** A publishable key (docs/widget.md): only POST /v1/verify, only from `allowed_origins`. */
  publishable: boolean;
  /** Empty for a secret key. */
  allowed_origins: string[];
  /** A publishable key's own limits; null: the server's defaults (docs/widget.md). */
  visitor_rate_limit: number | null;
  key_rate_limit: number | null;
  daily_cap: number | null;
}

function parseScopes(stored: string): Scope[] {
  return stored.split(' ').filter(isScope);
}

export function toKeyView(row: ApiKeyRow): KeyView {
  return {
    id: row.id,
    account_id: row.account_id,
    kind: row.kind,
    name: row.name,
    display: `${row.prefix}…${row.last4}`,
    last4: row.last4,
    scopes: parseScopes(row.scopes),
    status: row.revoked_at === null ? 'active' : 'revoked',
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    publishable: row.publishable === 1,
    allowed_origins: originsOf(row.allowed_origins),
    visitor_rate_limit: row.visitor_rate_limit,
    key_rate_limit: row.key_rate_limit,
    daily_cap: row.daily_cap,
  };
}

function originsOf(stored: string | null): string[] {
  return stored === null ? [] : stored.split(' ').filter((o) => o !== '');
}

export interface NewKey {
  accountId: string;
  kind: string;
  scopes?: readonly string[];
  name?: string | null;
  /** Makes a publishable key (scope `verify` only); its origins and limits are checked. */
  publishable?: PublishableOptions;
}

/**
 * Creates a key and returns the secret with its record: the only time the secret exists
 * outside the caller's hands. The 11th active key of an account is refused (`key_limit_reached`).
 */
export async function createKey(
  db: Executor,
  clock: Clock,
  input: NewKey,
): Promise<{ key: string; record: KeyView }> {
  if (!isKeyKind(input.kind))
    throw new AppError('invalid_request', `kind must be live or test, got "${input.kind}"`);
  const rules = input.publishable === undefined ? null : parsePublishableOptions(input.publishable);
  const scopes = input.scopes ?? (rules ? ['verify'] : SCOPES);
  if (rules && scopes.some((s) => s !== 'verify'))
    throw new AppError('invalid_request', 'a publishable key has the "verify" scope only');
  if (scopes.length === 0)
    throw new AppError('invalid_request', `a key needs at least one scope (${SCOPES.join(', ')})`);
  for (const s of scopes)
    if (!isScope(s)) throw new AppError('invalid_request', `unknown scope "${s}" (${SCOPES.join(', ')})`);
  if (input.name) refuseControlCharacters('name', input.name);
  await getAccount(db, input.accountId);
  const prefix = (rules ? PUBLISHABLE_KEY_PREFIX : KEY_PREFIX)[input.kind];
  const key = prefix + randomBase62(SECRET_LENGTH);
  const newRow = {
    id: newId('key'),
    account_id: input.accountId,
    kind: input.kind,
    name: input.name ?? null,
    prefix,
    key_hash: hashKey(key),
    last4: key.slice(-4),
    scopes: [...new Set(scopes)].join(' '),
    created_at: clock.now().toISOString(),
    publishable: rules ? 1 : 0,
    allowed_origins: rules ? rules.origins.join(' ') : null,
    visitor_rate_limit: rules?.visitorRateLimit ?? null,
    key_rate_limit: rules?.keyRateLimit ?? null,
    daily_cap: rules?.dailyCap ?? null,
  };
  // The limit's check and the insert in one transaction: the caller's when it has one.
  const insert = (trx: Executor) => storeBackend(trx).insertKeyWithinLimit(trx, newRow, MAX_ACTIVE_KEYS);
  const row = await inTransaction(db, insert);
  if (!row)
    throw new AppError(
      'key_limit_reached',
      `account ${input.accountId} already has ${MAX_ACTIVE_KEYS} active keys; revoke one first`,
    );
  return { key, record: toKeyView(row) };
}

/**
 * Who changes a key (audit.service.ts's ChangeBy). A member's creation or rotation is refused
 * while the account is suspended; the operator's is not (the operator suspended it).
 */
export type KeyChangeBy = ChangeBy;

/** createKey as a person does it: the suspension check, the key and its log entry in one transaction. */
export async function createKeyBy(
  db: Executor,
  clock: Clock,
  input: NewKey,
  by: KeyChangeBy,
): Promise<{ key: string; record: KeyView }> {
  return inTransaction(db, async (trx) => {
    if (by.actor.kind === 'member') await refuseIfSuspended(trx, input.accountId);
    const made = await createKey(trx, clock, input);
    await recordAudit(trx, clock, {
      accountId: made.record.account_id,
      type: 'key_created',
      ...by,
      details: { key_id: made.record.id, kind: made.record.kind },
    });
    return made;
  });
}

/**
 * Creates the replacement of `old` (its name, kind, scopes and a publishable key's rules) as a
 * person does it, with the `key_rotated` entry, in one transaction.
 */
export async function rotateKeyBy(
  db: Executor,
  clock: Clock,
  old: KeyView,
  by: KeyChangeBy,
): Promise<{ key: string; record: KeyView }> {
  if (old.status === 'revoked')
    throw new AppError('invalid_request', 'this key is revoked; create a new key instead of rotating it');
  return inTransaction(db, async (trx) => {
    if (by.actor.kind === 'member') await refuseIfSuspended(trx, old.account_id);
    const made = await createKey(trx, clock, {
      accountId: old.account_id,
      kind: old.kind,
      scopes: old.scopes,
      name: old.name,
      ...(old.publishable
        ? {
            publishable: {
              allowedOrigins: old.allowed_origins,
              visitorRateLimit: old.visitor_rate_limit,
              keyRateLimit: old.key_rate_limit,
              dailyCap: old.daily_cap,
            },
          }
        : {}),
    });
    await recordAudit(trx, clock, {
      accountId: old.account_id,
      type: 'key_rotated',
      ...by,
      details: { key_id: made.record.id, replaces: old.id },
    });
    return made;
  });
}

/** revokeKey with its log entry, in one transaction (revoking is never refused: it only takes away). */
export async function revokeKeyBy(
  db: Executor,
  clock: Clock,
  keyId: string,
  by: KeyChangeBy,
): Promise<KeyView> {
  return inTransaction(db, async (trx) => {
    const view = await revokeKey(trx, clock, keyId);
    await recordAudit(trx, clock, {
      accountId: view.account_id,
      type: 'key_revoked',
      ...by,
      details: { key_id: view.id },
    });
    return view;
  });
}

export async function revokeKey(db: Executor, clock: Clock, keyId: string): Promise<KeyView> {
  const row = await revokeKeyRow(db, keyId, clock.now().toISOString());
  if (!row) throw new AppError('not_found', `no key ${keyId}`);
  return toKeyView(row);
}

export async function getKey(db: Executor, keyId: string): Promise<KeyView> {
  const row = await findKeyById(db, keyId);
  if (!row) throw new AppError('not_found', `no key ${keyId}`);
  return toKeyView(row);
}

export async function listKeys(db: Executor, accountId: string): Promise<KeyView[]> {
  await getAccount(db, accountId);
  return (await listKeysByAccount(db, accountId)).map(toKeyView);
}

/** Who a request is, once its key is authenticated. */
export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  kind: KeyKind;
  scopes: ReadonlySet<Scope>;
  /** `svc_live_` or `svc_test_`: a key answered from the cache must start with it. */
  prefix: string;
  /** The account's plan slug and own rate limit, read in the same query (the rate limiter needs them). */
  accountPlan: string;
  accountRateLimit: number | null;
  /** The account's own monthly quota (null: its plan's): a publishable key's default daily cap follows it. */
  accountQuotaLimit: number | null;
  /**
   * The account's suspension, read in the same query: the cache is emptied by the change token
   * when it is suspended or resumed, so it takes effect on the next request in every process.
   */
  accountSuspension: { since: string; reason: string | null } | null;
  /** A publishable key's origins and limits; null for a secret key. */
  publishable: PublishableRules | null;
}

/**
 * Authenticates a presented key: malformed or unknown → `invalid_api_key`, revoked →
 * `revoked_api_key`. One indexed query by hash, then a constant-time comparison. With a cache
 * (services/keys/key-cache.ts), a live key seen before is answered from memory as long as the store
 * has not changed since; the store's change token is read before the query, so what the query
 * returns is kept only if nothing changed in between.
 */
export async function authenticateKey(
  db: Executor,
  presented: string,
  cache?: KeyCache<AuthenticatedKey>,
): Promise<AuthenticatedKey> {
  if (!KEY_FORMAT.test(presented)) throw new AppError('invalid_api_key', 'the API key is malformed');
  const hash = hashKey(presented);
  const token = cache ? storeBackend(db).changes.changeToken() : null;
  if (cache && token !== null) {
    const hit = cache.lookup(hash, token);
    if (hit) {
      if (!presented.startsWith(hit.prefix))
        throw new AppError('invalid_api_key', 'the API key is not valid');
      return hit;
    }
  }
  const row = await findKeyByHash(db, hash);
  if (
    !row ||
    !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex')) ||
    !presented.startsWith(row.prefix)
  )
    throw new AppError('invalid_api_key', 'the API key is not valid');
  if (row.revoked_at !== null) throw new AppError('revoked_api_key', 'the API key has been revoked');
  // Shared by every request the cache answers: frozen so that none can change it for the others.
  const key: AuthenticatedKey = Object.freeze({
    keyId: row.id,
    accountId: row.account_id,
    kind: row.kind,
    scopes: new Set(parseScopes(row.scopes)),
    prefix: row.prefix,
    accountPlan: row.account_plan,
    accountRateLimit: row.account_rate_limit,
    accountQuotaLimit: row.account_quota_limit,
    accountSuspension:
      row.account_suspended_at === null
        ? null
        : Object.freeze({ since: row.account_suspended_at, reason: row.account_suspended_reason }),
    publishable:
      row.publishable === 1
        ? Object.freeze({
            origins: new Set(originsOf(row.allowed_origins)),
            visitorRateLimit: row.visitor_rate_limit,
            keyRateLimit: row.key_rate_limit,
            dailyCap: row.daily_cap,
          })
        : null,
  });
  if (cache && token !== null) cache.remember(hash, key, token);
  return key;
}
