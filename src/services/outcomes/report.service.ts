/**
 * How accurate are we? (docs/outcomes.md, "How accurate are we?"): the verdicts an account was
 * given in a period (the verdict log, verdict-log.ts) set against the delivery outcomes reported
 * after each, per status, reason, provider and score band, with the reliability diagram's points
 * (per score decile: the score read as the predicted chance of delivery, against the observed
 * share). Every figure comes with the counts behind it. The operator console reads the same over
 * every account, in aggregate only.
 */
import { DAY } from '../../clock.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import { verdictOutcomes, type VerdictOutcomeRow } from '../../store/verdict-log.store.js';
import type { VerdictLog } from './verdict-log.js';

/** The period when none is asked. */
export const DEFAULT_REPORT_DAYS = 90;
/** The longest period one report may cover (the outcome retention's default). */
export const MAX_REPORT_DAYS = 730;

/** What became of the addresses given one verdict (or one group of verdicts). */
export interface OutcomeFigures {
  /** Addresses given it in the period. */
  verified: number;
  /** Of those, addresses with any outcome after the verdict. */
  sent: number;
  /** Of those sent to, addresses with a proof of delivery after it and no hard bounce. */
  delivered: number;
  /** Of those sent to, addresses with a hard bounce after it. */
  hard_bounced: number;
  /** hard_bounced / sent, to 4 decimals; null when nothing was sent. */
  bounce_rate: number | null;
}

export interface ScoreBand extends OutcomeFigures {
  /** Lowest and highest score of the band, both included. */
  min: number;
  max: number;
}

/** One point of the reliability diagram: a score decile. */
export interface ReliabilityPoint {
  min: number;
  max: number;
  /** Addresses of the decile with a known fate: delivered + hard_bounced. */
  n: number;
  delivered: number;
  hard_bounced: number;
  /** Their mean score / 100, to 4 decimals; null when n is 0. */
  predicted: number | null;
  /** delivered / n, to 4 decimals; null when n is 0. */
  observed: number | null;
}

export interface AccuracyReport {
  from: string;
  to: string;
  totals: OutcomeFigures;
  by_status: ({ status: string } & OutcomeFigures)[];
  by_reason: ({ status: string; reason: string | null } & OutcomeFigures)[];
  by_provider: ({ provider: string | null } & OutcomeFigures)[];
  by_score_band: ScoreBand[];
  reliability: ReliabilityPoint[];
}

/** The score bands of the report: the undeliverable band, three below the line of 60, two above. */
export const SCORE_BANDS: readonly (readonly [number, number])[] = [
  [0, 9],
  [10, 39],
  [40, 59],
  [60, 79],
  [80, 100],
];

const DECILES: readonly (readonly [number, number])[] = Array.from({ length: 10 }, (_, i) => [
  i * 10,
  i === 9 ? 100 : i * 10 + 9,
]);

export interface ReportPeriodInput {
  from?: string | undefined;
  to?: string | undefined;
}

const rate = (num: number, den: number): number | null =>
  den === 0 ? null : Math.round((num / den) * 10_000) / 10_000;

/**
 * The period of a report: `to` default now, `from` default DEFAULT_REPORT_DAYS before `to`; each
 * an ISO 8601 date or time. Throws `invalid_request` for a time that does not parse, `from` not
 * before `to`, or more than MAX_REPORT_DAYS.
 */
export function reportPeriod(clock: Clock, input: ReportPeriodInput): { from: Date; to: Date } {
  const parse = (name: string, value: string | undefined, fallback: () => Date): Date => {
    if (value === undefined) return fallback();
    const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/i.test(value) ? Date.parse(value) : NaN;
    if (Number.isNaN(time))
      throw new AppError('invalid_request', `${name} must be an ISO 8601 date or a time with a zone`);
    return new Date(time);
  };
  const to = parse('to', input.to, () => clock.now());
  const from = parse('from', input.from, () => new Date(to.getTime() - DEFAULT_REPORT_DAYS * DAY));
  if (from.getTime() >= to.getTime()) throw new AppError('invalid_request', 'from must be before to');
  if (to.getTime() - from.getTime() > MAX_REPORT_DAYS * DAY)
    throw new AppError('invalid_request', `a report covers at most ${MAX_REPORT_DAYS} days`);
  return { from, to };
}

export interface ReportDeps {
  db: Executor;
  verdictLog: VerdictLog;
}

type Counts = Pick<OutcomeFigures, 'verified' | 'sent' | 'delivered' | 'hard_bounced'>;

const zero = (): Counts => ({ verified: 0, sent: 0, delivered: 0, hard_bounced: 0 });

function add(into: Counts, row: VerdictOutcomeRow): void {
  into.verified += row.verified;
  into.sent += row.sent;
  into.delivered += row.delivered;
  into.hard_bounced += row.bounced;
}

const figures = (c: Counts): OutcomeFigures => ({ ...c, bounce_rate: rate(c.hard_bounced, c.sent) });

function groupBy<K>(
  rows: readonly VerdictOutcomeRow[],
  key: (r: VerdictOutcomeRow) => K,
): Map<string, [K, Counts]> {
  const out = new Map<string, [K, Counts]>();
  for (const row of rows) {
    const k = key(row);
    const id = JSON.stringify(k);
    const entry = out.get(id) ?? [k, zero()];
    add(entry[1], row);
    out.set(id, entry);
  }
  return out;
}

/** The report of `rows` (verdictOutcomes' groups) for the period. */
export function buildReport(
  rows: readonly VerdictOutcomeRow[],
  period: { from: Date; to: Date },
): AccuracyReport {
  const totals = zero();
  for (const row of rows) add(totals, row);
  const inRange = ([min, max]: readonly [number, number]) =>
    rows.filter((r) => r.score >= min && r.score <= max);
  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    totals: figures(totals),
    by_status: [...groupBy(rows, (r) => r.status).values()].map(([status, c]) => ({ status, ...figures(c) })),
    by_reason: [...groupBy(rows, (r) => [r.status, r.reason] as const).values()].map(
      ([[status, reason], c]) => ({
        status,
        reason: reason === '' ? null : reason,
        ...figures(c),
      }),
    ),
    by_provider: [...groupBy(rows, (r) => r.provider).values()].map(([provider, c]) => ({
      provider: provider === '' ? null : provider,
      ...figures(c),
    })),
    by_score_band: SCORE_BANDS.map(([min, max]) => {
      const c = zero();
      for (const row of inRange([min, max])) add(c, row);
      return { min, max, ...figures(c) };
    }),
    reliability: DECILES.map(([min, max]) => {
      let delivered = 0;
      let bounced = 0;
      let scoreSum = 0;
      for (const row of inRange([min, max])) {
        delivered += row.delivered;
        bounced += row.bounced;
        scoreSum += row.score * (row.delivered + row.bounced);
      }
      const n = delivered + bounced;
      return {
        min,
        max,
        n,
        delivered,
        hard_bounced: bounced,
        predicted: n === 0 ? null : Math.round((scoreSum / n / 100) * 10_000) / 10_000,
        observed: rate(delivered, n),
      };
    }),
  };
}

/**
 * The account's report for the period (`accountId` null: every account's, in aggregate). The
 * verdicts this process still buffers are written first, so that the report includes them.
 */
export async function accuracyReport(
  deps: ReportDeps,
  input: { accountId: string | null; from: Date; to: Date },
): Promise<AccuracyReport> {
  await deps.verdictLog.flush();
  const rows = await verdictOutcomes(deps.db, {
    accountId: input.accountId,
    from: input.from.toISOString(),
    to: input.to.toISOString(),
  });
  return buildReport(rows, input);
}

/** The report of an account that holds no data (a test key's): the same shape, every count 0. */
export function emptyReport(period: { from: Date; to: Date }): AccuracyReport {
  return buildReport([], period);
}
