/**
 * The plan table as data. Defaults below; an operator overrides any field of any plan with
 * MAILVERDICT_PLANS / --plans (JSON), e.g. `{"free":{"monthly_quota":500,"rate_limit_per_second":2}}`.
 * An account may carry its own quota and rate limit, which win over its plan's.
 */
import type { Config } from '../../config.js';
import { ConfigError } from '../../config.js';

export const PLAN_SLUGS = ['free', 'starter', 'growth', 'pro', 'scale', 'enterprise', 'unlimited'] as const;
export type PlanSlug = (typeof PLAN_SLUGS)[number];

export interface Plan {
  slug: PlanSlug;
  /** Verifications a month; null: no quota (nothing is ever refused or counted as overage). */
  monthlyQuota: number | null;
  ratePerSecond: number;
  overageEnabled: boolean;
  /** Price of one verification beyond the quota, in the operator's currency. */
  overageRatePerVerification: number;
}

export type PlanTable = Readonly<Record<PlanSlug, Readonly<Plan>>>;

export const DEFAULT_PLANS: PlanTable = Object.freeze({
  free: {
    slug: 'free',
    monthlyQuota: 1_000,
    ratePerSecond: 5,
    overageEnabled: false,
    overageRatePerVerification: 0,
  },
  starter: {
    slug: 'starter',
    monthlyQuota: 10_000,
    ratePerSecond: 10,
    overageEnabled: true,
    overageRatePerVerification: 0.008,
  },
  growth: {
    slug: 'growth',
    monthlyQuota: 50_000,
    ratePerSecond: 25,
    overageEnabled: true,
    overageRatePerVerification: 0.006,
  },
  pro: {
    slug: 'pro',
    monthlyQuota: 250_000,
    ratePerSecond: 50,
    overageEnabled: true,
    overageRatePerVerification: 0.004,
  },
  scale: {
    slug: 'scale',
    monthlyQuota: 1_000_000,
    ratePerSecond: 100,
    overageEnabled: true,
    overageRatePerVerification: 0.003,
  },
  enterprise: {
    slug: 'enterprise',
    monthlyQuota: 5_000_000,
    ratePerSecond: 250,
    overageEnabled: true,
    overageRatePerVerification: 0.002,
  },
  // The operator's own account on a self-hosted server (the first start's, `--bootstrap-plan`).
  unlimited: {
    slug: 'unlimited',
    monthlyQuota: null,
    ratePerSecond: 100,
    overageEnabled: false,
    overageRatePerVerification: 0,
  },
});

export function isPlanSlug(value: string): value is PlanSlug {
  return (PLAN_SLUGS as readonly string[]).includes(value);
}

const OVERRIDE_FIELDS = {
  monthly_quota: 'monthlyQuota',
  rate_limit_per_second: 'ratePerSecond',
  overage_enabled: 'overageEnabled',
  overage_rate_per_verification: 'overageRatePerVerification',
} as const;

/** The default table with the operator's overrides applied; a bad override throws ConfigError. */
export function resolvePlans(overrides: Readonly<Record<string, unknown>>): PlanTable {
  const table = {} as Record<PlanSlug, Plan>;
  for (const slug of PLAN_SLUGS) table[slug] = { ...DEFAULT_PLANS[slug] };
  for (const [slug, raw] of Object.entries(overrides)) {
    if (!isPlanSlug(slug))
      throw new ConfigError(`MAILVERDICT_PLANS: unknown plan "${slug}" (${PLAN_SLUGS.join(', ')})`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new ConfigError(`MAILVERDICT_PLANS: "${slug}" must be an object`);
    const plan = table[slug];
    for (const [field, value] of Object.entries(raw as Record<string, unknown>)) {
      const where = `MAILVERDICT_PLANS: ${slug}.${field}`;
      switch (field) {
        case 'monthly_quota':
          // null: no quota.
          if (value !== null && (!Number.isInteger(value) || (value as number) < 0))
            throw new ConfigError(`${where} must be a non-negative integer or null (no quota)`);
          plan.monthlyQuota = value as number | null;
          break;
        case 'rate_limit_per_second':
          if (!Number.isInteger(value) || (value as number) < 1)
            throw new ConfigError(`${where} must be a positive integer`);
          plan.ratePerSecond = value as number;
          break;
        case 'overage_enabled':
          if (typeof value !== 'boolean') throw new ConfigError(`${where} must be true or false`);
          plan.overageEnabled = value;
          break;
        case 'overage_rate_per_verification':
          if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
            throw new ConfigError(`${where} must be a non-negative number`);
          plan.overageRatePerVerification = value;
          break;
        default:
          throw new ConfigError(`${where}: unknown field (${Object.keys(OVERRIDE_FIELDS).join(', ')})`);
      }
    }
  }
  for (const slug of PLAN_SLUGS) Object.freeze(table[slug]);
  return Object.freeze(table);
}

const resolved = new WeakMap<object, PlanTable>();

/** The plan table of a (frozen) config, resolved once per config object. */
export function plansFromConfig(config: Pick<Config, 'planOverrides'>): PlanTable {
  let table = resolved.get(config.planOverrides);
  if (!table) {
    table = resolvePlans(config.planOverrides);
    resolved.set(config.planOverrides, table);
  }
  return table;
}

/** What an account is allowed, after its own overrides. */
export interface AccountLimits {
  plan: PlanSlug;
  /** null: no quota. */
  quotaLimit: number | null;
  ratePerSecond: number;
  overageEnabled: boolean;
  overageRatePerVerification: number;
}

export function accountLimits(
  plans: PlanTable,
  account: {
    plan: string;
    quota_limit: number | null;
    rate_limit: number | null;
    /** The account's own overage switch (1/0; null or absent: the plan's). */
    overage_enabled?: number | null;
  },
): AccountLimits {
  // A plan removed from the table since the account was created falls back to free.
  const plan = isPlanSlug(account.plan) ? plans[account.plan] : plans.free;
  return {
    plan: plan.slug,
    quotaLimit: account.quota_limit ?? plan.monthlyQuota,
    ratePerSecond: account.rate_limit ?? plan.ratePerSecond,
    overageEnabled:
      account.overage_enabled === null || account.overage_enabled === undefined
        ? plan.overageEnabled
        : account.overage_enabled === 1,
    overageRatePerVerification: plan.overageRatePerVerification,
  };
}
