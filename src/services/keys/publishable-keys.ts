/**
 * Publishable keys (docs/widget.md): keys made for web pages. What they may do is narrow: only
 * `POST /v1/verify`, only from their allowed origins, limited per visitor, per key and per day.
 * This module holds those rules; keys.service.ts creates and authenticates the keys, api/ applies
 * the rules to a request.
 */
import type { PublishableDefaults } from '../../config.js';
import { AppError } from '../../errors.js';
import { storeBackend } from '../../store/backend.js';
import type { Executor } from '../../store/executor.js';
import { activePublishableOrigins, countKeyDay } from '../../store/key.store.js';

/** Most origins one key may allow. */
export const MAX_ALLOWED_ORIGINS = 20;

/** What the creator of a publishable key gives (the CLI's flags, the dashboard's form). */
export interface PublishableOptions {
  allowedOrigins: readonly string[];
  visitorRateLimit?: number | null;
  keyRateLimit?: number | null;
  dailyCap?: number | null;
}

/** A publishable key's rules as authentication hands them to the API. */
export interface PublishableRules {
  origins: ReadonlySet<string>;
  /** Null: the server's default (config.publishable). */
  visitorRateLimit: number | null;
  keyRateLimit: number | null;
  dailyCap: number | null;
}

/**
 * An allowed origin as a browser sends it in `Origin`: scheme, host and port, nothing else
 * (`https://shop.example`, `http://localhost:5173`). Returns the normalised origin (lower-cased
 * host, default port dropped); a path, query, credentials or a wildcard is `invalid_request`.
 */
export function parseOrigin(raw: string): string {
  const refuse = (why: string): never => {
    throw new AppError(
      'invalid_request',
      `allowed origin "${raw}" ${why}; give scheme, host and optional port, e.g. https://shop.example`,
    );
  };
  if (raw.includes('*')) refuse('has a wildcard (not supported: list each origin)');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') refuse('must use https: or http:');
  if (url.username !== '' || url.password !== '') refuse('must not carry credentials');
  if (url.search !== '' || url.hash !== '' || url.pathname !== '/' || raw.endsWith('?'))
    refuse('must not have a path, query or fragment');
  if (!/^https?:\/\/[^/?#]+\/?$/i.test(raw)) refuse('must not have a path');
  return url.origin;
}

function limit(name: string, value: number | null | undefined, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new AppError('invalid_request', `${name} must be an integer from 1 to ${max}, got ${value}`);
  return value;
}

/** Checks a new publishable key's options; what keys.service.ts stores. */
export function parsePublishableOptions(options: PublishableOptions): {
  origins: string[];
  visitorRateLimit: number | null;
  keyRateLimit: number | null;
  dailyCap: number | null;
} {
  if (options.allowedOrigins.length === 0)
    throw new AppError('invalid_request', 'a publishable key needs at least one allowed origin');
  const origins = [...new Set(options.allowedOrigins.map(parseOrigin))];
  if (origins.length > MAX_ALLOWED_ORIGINS)
    throw new AppError('invalid_request', `a publishable key allows at most ${MAX_ALLOWED_ORIGINS} origins`);
  return {
    origins,
    visitorRateLimit: limit('visitor_rate_limit', options.visitorRateLimit, 100_000),
    keyRateLimit: limit('key_rate_limit', options.keyRateLimit, 100_000),
    dailyCap: limit('daily_cap', options.dailyCap, 100_000_000),
  };
}

/** The days a month's quota is compared with a daily cap over: a cap times this must fit the quota. */
export const DAYS_PER_MONTH = 30;

/**
 * A key's daily cap when it sets none (issue 26): `dailySharePercent` of the account's monthly
 * quota (2 % by default: 30 days at the cap spend 60 % of it, one day 2 %), at least 1. An account
 * without a quota (null, or not finite) gets the server's fixed `dailyCap` (1,000 by default):
 * a public token is bounded all the same, and no quota can say how much is too much.
 */
export function defaultDailyCap(defaults: PublishableDefaults, monthlyQuota: number | null): number {
  if (monthlyQuota === null || !Number.isFinite(monthlyQuota)) return defaults.dailyCap;
  return Math.max(1, Math.floor((monthlyQuota * defaults.dailySharePercent) / 100));
}

/** What a request of this key runs under: the key's own limits, else the server's defaults. */
export interface EffectiveLimits {
  visitorRateLimit: number;
  keyRateLimit: number;
  dailyCap: number;
}

/** The limits a request of this key runs under: the key's own, else the defaults (the cap from `monthlyQuota`). */
export function effectiveLimits(
  rules: Pick<PublishableRules, 'visitorRateLimit' | 'keyRateLimit' | 'dailyCap'>,
  defaults: PublishableDefaults,
  monthlyQuota: number | null,
): EffectiveLimits {
  return {
    visitorRateLimit: rules.visitorRateLimit ?? defaults.visitorRateLimit,
    keyRateLimit: rules.keyRateLimit ?? defaults.keyRateLimit,
    dailyCap: rules.dailyCap ?? defaultDailyCap(defaults, monthlyQuota),
  };
}

/** What one day at a publishable key's cap costs its account (the keys page, `keys create`). */
export interface DailyCapCost {
  /** The cap in force: the key's own, or the default from the quota. */
  daily_cap: number;
  /** True when the key sets no cap of its own. */
  default_cap: boolean;
  /** The account's monthly quota; null: it has none. */
  monthly_quota: number | null;
  /** One day at the cap as a share of the monthly quota (percent, one decimal); null without a quota. */
  day_percent_of_quota: number | null;
  /** Whether 30 days at the cap spend more than the monthly quota. */
  month_exceeds_quota: boolean;
  /** The warning to show when it does; null otherwise. */
  warning: string | null;
}

/**
 * What one day at the key's cap costs: anyone who reads the page can spend up to the cap every
 * day, so a cap whose 30 days exceed the monthly quota lets a stranger spend the month.
 */
export function dailyCapCost(
  ownCap: number | null,
  defaults: PublishableDefaults,
  monthlyQuota: number | null,
): DailyCapCost {
  const quota = monthlyQuota === null || !Number.isFinite(monthlyQuota) ? null : monthlyQuota;
  const cap = ownCap ?? defaultDailyCap(defaults, quota);
  const exceeds = quota !== null && cap * DAYS_PER_MONTH > quota;
  return {
    daily_cap: cap,
    default_cap: ownCap === null,
    monthly_quota: quota,
    day_percent_of_quota: quota === null || quota === 0 ? null : Math.round((cap / quota) * 1000) / 10,
    month_exceeds_quota: exceeds,
    warning: exceeds
      ? `a daily cap of ${cap} verifications times ${DAYS_PER_MONTH} days is ${cap * DAYS_PER_MONTH}, more than the monthly quota of ${quota}: anyone who reads the page can spend the month's quota with this public key; a cap of ${Math.max(1, Math.floor(quota / DAYS_PER_MONTH))} or less cannot`
      : null,
  };
}

/** A request of a publishable key from `origin` (the `Origin` header): `origin_not_allowed` unless listed. */
export function checkOrigin(rules: PublishableRules, origin: string | undefined): void {
  if (origin === undefined || origin === '')
    throw new AppError(
      'origin_not_allowed',
      'a publishable key is accepted only from a web page of an allowed origin, and this request has no Origin',
    );
  if (!rules.origins.has(origin))
    throw new AppError('origin_not_allowed', `origin ${origin} is not allowed for this publishable key`);
}

/**
 * Counts one verification against the key's daily cap (UTC days), in the store so that every
 * process shares it; past the cap, 429 `rate_limit_exceeded` with a Retry-After to the next day.
 * Returns true for the one request of the day that reaches the cap (the store's counter gives
 * `used === cap` to exactly one), so that its owner is told once (issue 26).
 */
export async function consumeDailyCap(db: Executor, keyId: string, cap: number, now: Date): Promise<boolean> {
  const day = now.toISOString().slice(0, 10);
  const used = await countKeyDay(db, keyId, day, cap);
  if (used !== undefined) return used === cap;
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  throw new AppError(
    'rate_limit_exceeded',
    `this publishable key's daily cap of ${cap} verifications is reached; it resets at 00:00 UTC`,
    { retryAfterSeconds: Math.max(1, Math.ceil((midnight - now.getTime()) / 1000)) },
  );
}

/**
 * Answers a CORS preflight, which carries no key: is `origin` allowed by any active publishable
 * key? The set is read from the store once and kept while the store's change token (the key
 * cache's, services/keys/key-cache.ts) stays the same, so a new or revoked key counts at once.
 */
export function createOriginCheck(db: Executor): (origin: string) => Promise<boolean> {
  let cached: { token: number; origins: Set<string> } | null = null;
  return async (origin) => {
    const token = storeBackend(db).changes.changeToken();
    if (token === null || cached?.token !== token) {
      const rows = await activePublishableOrigins(db);
      const origins = new Set(rows.flatMap((r) => r.split(' ')));
      cached = token === null ? null : { token, origins };
      return origins.has(origin);
    }
    return cached.origins.has(origin);
  };
}
