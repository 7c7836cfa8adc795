/** Shapes the fake server answers with, valid by the contract's types. */
import type { DayCount, JobItem, Overview, Usage, VerificationResult } from '../api/contract';

export function usage(
  overrides: { used?: number; limit?: number; overage?: boolean; overageCount?: number } = {},
): Usage {
  const limit = overrides.limit ?? 10_000;
  const used = overrides.used ?? 1_234;
  return {
    plan: 'starter',
    period_start: '2026-03-10T00:00:00.000Z',
    period_end: '2026-04-10T00:00:00.000Z',
    quota: { limit, used, remaining: Math.max(0, limit - used), reset_at: '2026-04-10T00:00:00.000Z' },
    rate_limit: { per_second: 10 },
    overage: {
      enabled: overrides.overage ?? true,
      rate_per_verification: 0.008,
      current_overage_count: overrides.overageCount ?? Math.max(0, used - limit),
    },
  };
}

export function job(overrides: Partial<JobItem> = {}): JobItem {
  return {
    job_id: 'job_1',
    name: 'leads',
    status: 'completed',
    mode: 'live',
    total: 1000,
    processed: 1000,
    created_at: '2026-03-12T09:00:00.000Z',
    completed_at: '2026-03-12T09:03:00.000Z',
    results_expire_at: '2026-03-19T09:03:00.000Z',
    downloadable: true,
    has_original_columns: true,
    paused: null,
    ...overrides,
  };
}

function days(start: string, count: number, value: (i: number) => [number, number]): DayCount[] {
  const first = Date.parse(start);
  return Array.from({ length: count }, (_, i) => {
    const [single, batch] = value(i);
    return { date: new Date(first + i * 86_400_000).toISOString().slice(0, 10), single, batch };
  });
}

export function overview(
  overrides: Partial<Overview> & { used?: number; limit?: number; overage?: boolean } = {},
): Overview {
  const u = overrides.usage ?? usage(overrides);
  const { enabled, current_overage_count: count, rate_per_verification: rate } = u.overage;
  return {
    usage: u,
    overage_cost:
      overrides.overage_cost !== undefined ? overrides.overage_cost : enabled ? count * rate : null,
    daily: overrides.daily ?? {
      current: days('2026-03-10', 31, (i) => [i * 2, i === 2 ? 1000 : 0]),
      previous: days('2026-02-10', 28, (i) => [i, 0]),
    },
    latest_jobs: overrides.latest_jobs ?? [job()],
    schedule_notices: overrides.schedule_notices ?? [],
    cap_notices: overrides.cap_notices ?? [],
    suspension: overrides.suspension ?? null,
  };
}

/** A risky catch-all result with every check filled, as POST /verify returns it. */
export function result(overrides: Partial<VerificationResult> = {}): VerificationResult {
  return {
    email: 'info@gmial.com',
    valid: true,
    status: 'risky',
    score: 53,
    disposable: false,
    catchAll: true,
    mx: true,
    reason: 'catch_all',
    latency_ms: 812,
    did_you_mean: 'info@gmail.com',
    checks: {
      syntax: { passed: true, local: 'info', domain: 'gmial.com', error: null },
      mx: {
        passed: true,
        records: [
          { exchange: 'mx1.gmial.com', priority: 10 },
          { exchange: 'mx2.gmial.com', priority: 20 },
        ],
        implicit: false,
        error: null,
        provider: null,
      },
      smtp: {
        passed: true,
        host: 'mx1.gmial.com',
        code: 250,
        enhanced_code: '2.1.5',
        message: 'Recipient OK',
        tls: true,
        duration_ms: 640,
      },
      disposable: { passed: true, value: false, signal: null, mx_host: null },
      roleAddress: { passed: false, value: true },
      freeProvider: { passed: false, value: true },
      catchAll: { passed: false, value: true },
    },
    ...overrides,
  };
}
