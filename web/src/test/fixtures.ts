/** Shapes the fake server answers with, valid by the contract's types. */
import type { AccuracyReport, DayCount, JobItem, Overview, Usage, VerificationResult } from '../api/contract';

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

/** The figures of one group of an accuracy report; the bounce rate unrounded. */
export const figures = (verified: number, sent: number, delivered: number, hard: number) => ({
  verified,
  sent,
  delivered,
  hard_bounced: hard,
  bounce_rate: sent === 0 ? null : hard / sent,
});

const decile = (i: number, over: Partial<AccuracyReport['reliability'][number]> = {}) => ({
  min: i * 10,
  max: i === 9 ? 100 : i * 10 + 9,
  n: 0,
  delivered: 0,
  hard_bounced: 0,
  predicted: null,
  observed: null,
  ...over,
});

/** An accuracy report: 1,000 deliverable addresses sent to, 4 bounced; 10 catch-all, 2 bounced. */
export const accuracyReport = (over: Partial<AccuracyReport> = {}): AccuracyReport => ({
  from: '2025-12-10T12:00:00.000Z',
  to: '2026-03-10T12:00:00.000Z',
  totals: figures(1_300, 1_010, 1_004, 6),
  by_status: [
    { status: 'deliverable', ...figures(1_200, 1_000, 996, 4) },
    { status: 'risky', ...figures(100, 10, 8, 2) },
  ],
  by_reason: [
    { status: 'deliverable', reason: null, ...figures(1_200, 1_000, 996, 4) },
    { status: 'risky', reason: 'catch_all', ...figures(100, 10, 8, 2) },
  ],
  by_provider: [
    { provider: 'google', ...figures(1_000, 900, 898, 2) },
    { provider: null, ...figures(300, 110, 106, 4) },
  ],
  by_score_band: [
    { min: 0, max: 9, ...figures(0, 0, 0, 0) },
    { min: 10, max: 39, ...figures(0, 0, 0, 0) },
    { min: 40, max: 59, ...figures(100, 10, 8, 2) },
    { min: 60, max: 79, ...figures(0, 0, 0, 0) },
    { min: 80, max: 100, ...figures(1_200, 1_000, 996, 4) },
  ],
  reliability: Array.from({ length: 10 }, (_, i) =>
    i === 5
      ? decile(5, { n: 10, delivered: 8, hard_bounced: 2, predicted: 0.55, observed: 0.8 })
      : i === 9
        ? decile(9, { n: 1_000, delivered: 996, hard_bounced: 4, predicted: 0.95, observed: 0.996 })
        : decile(i),
  ),
  ...over,
});
