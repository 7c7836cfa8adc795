import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { DEFAULT_PLANS, PLAN_SLUGS, accountLimits, resolvePlans } from '../../src/services/usage/plans.js';

describe('plans', () => {
  it('has the seven slugs; free allows no overage, paid plans do, unlimited has no quota to go over', () => {
    expect(Object.keys(DEFAULT_PLANS)).toEqual([...PLAN_SLUGS]);
    expect(DEFAULT_PLANS.free.overageEnabled).toBe(false);
    expect(DEFAULT_PLANS.unlimited).toMatchObject({ monthlyQuota: null, overageEnabled: false });
    for (const slug of PLAN_SLUGS.filter((s) => s !== 'free' && s !== 'unlimited'))
      expect(DEFAULT_PLANS[slug].overageEnabled).toBe(true);
    expect(DEFAULT_PLANS.pro.ratePerSecond).toBe(50);
  });

  it('applies operator overrides field by field', () => {
    const plans = resolvePlans({
      free: { monthly_quota: 500 },
      pro: { overage_enabled: false, overage_rate_per_verification: 0.01 },
    });
    expect(plans.free).toMatchObject({ monthlyQuota: 500, ratePerSecond: DEFAULT_PLANS.free.ratePerSecond });
    expect(plans.pro).toMatchObject({ overageEnabled: false, overageRatePerVerification: 0.01 });
    expect(DEFAULT_PLANS.free.monthlyQuota).toBe(1000);
  });

  it('refuses an unknown plan, field or bad value with a ConfigError', () => {
    expect(() => resolvePlans({ gold: {} })).toThrow(ConfigError);
    expect(() => resolvePlans({ free: { quota: 1 } })).toThrow(/unknown field/);
    expect(() => resolvePlans({ free: { monthly_quota: -1 } })).toThrow(/monthly_quota/);
    expect(() => resolvePlans({ free: { rate_limit_per_second: 0 } })).toThrow(/rate_limit_per_second/);
    expect(() => resolvePlans({ free: { overage_enabled: 'yes' } })).toThrow(/overage_enabled/);
  });

  it("lets an account's own quota and rate limit win over its plan's", () => {
    expect(accountLimits(DEFAULT_PLANS, { plan: 'starter', quota_limit: 42, rate_limit: 7 })).toMatchObject({
      plan: 'starter',
      quotaLimit: 42,
      ratePerSecond: 7,
      overageEnabled: true,
    });
    expect(
      accountLimits(DEFAULT_PLANS, { plan: 'starter', quota_limit: null, rate_limit: null }).quotaLimit,
    ).toBe(10_000);
  });
});
