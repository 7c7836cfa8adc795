/**
 * Overview: the plan, the billing period, the quota gauge, overage and rate limit, verifications
 * per day (this period against the previous one) and the latest lists; above them, a notice per
 * list whose scheduled re-verification was skipped for quota. Polled every 10 s, so
 * verifications made through the API show up without a reload.
 *
 * A suspended account (docs/operators.md) gets an alert above it all: "This account is suspended:
 * <reason>".
 *
 * Accessible names: heading "Overview"; meter "Quota used"; headings "Verifications per day",
 * "Latest lists"; the chart's table behind "Show the numbers as a table"; link "Download CSV of
 * verifications per day".
 */
import { Link } from 'wouter';
import type { Overview, Usage } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { useOverview } from '../api/queries';
import { DailyChart } from '../components/daily-chart';
import { formatDateTime, formatDay, formatNumber, plural } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { UsageGauge } from '../components/usage-gauge';
import { JobsTable } from './jobs-table';

function OverageText({ usage, cost }: { usage: Usage; cost: number | null }) {
  const { overage, quota } = usage;
  if (quota.limit === null)
    return (
      <p>
        <strong>Not needed.</strong> This account has no monthly quota: live verifications never stop for it.
      </p>
    );
  if (!overage.enabled) {
    return (
      <p>
        <strong>Off.</strong> Live verifications stop when the quota is used up
        {quota.remaining === 0 ? ' — and it is used up until the period resets.' : '.'}
      </p>
    );
  }
  return (
    <>
      <p>
        <strong>On</strong> at {overage.rate_per_verification} per verification beyond the quota.{' '}
        {overage.current_overage_count > 0
          ? `${plural(overage.current_overage_count, 'verification')} beyond the quota this period.`
          : 'Nothing beyond the quota this period.'}
      </p>
      {cost === null ? null : (
        <p>
          Cost so far: <strong>{formatCost(cost)}</strong>{' '}
          <span className="muted small">
            ({formatNumber(overage.current_overage_count)} × {overage.rate_per_verification})
          </span>
        </p>
      )}
    </>
  );
}

/** The overage cost in the plan's unit (no currency is configured): up to 4 decimals. */
const formatCost = (cost: number): string =>
  cost.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 4 });

function OverviewContent({ overview }: { overview: Overview }) {
  const { usage, daily, latest_jobs: jobs } = overview;
  const api = useEndpoints();
  const today = new Date().toISOString().slice(0, 10);
  return (
    <>
      {overview.schedule_notices.map((n) => (
        <p key={n.job_id} className="notice notice-warn" role="status">
          The scheduled re-verification of{' '}
          <Link href={`/lists/${encodeURIComponent(n.job_id)}`}>{n.name}</Link> was skipped on{' '}
          {formatDateTime(n.skipped_at)}: the remaining quota could not cover its{' '}
          {plural(n.need, 'address', 'addresses')}. Next try: {formatDateTime(n.next_run_at)}.
        </p>
      ))}
      {overview.cap_notices.map((n) => (
        <p key={n.key_id} className="notice notice-warn" role="status">
          The publishable key <Link href="/keys">{n.name ?? n.display}</Link> ({n.display}) reached its daily
          cap of {plural(n.daily_cap, 'verification', 'verifications')} today: its page cannot verify
          addresses until 00:00 UTC. A publishable key is public; if this is not your visitors’ traffic, lower
          its cap, rotate it or revoke it.
        </p>
      ))}
      <div className="cards">
        <section className="card" aria-labelledby="plan-title">
          <h2 id="plan-title" className="card-title">
            Plan
          </h2>
          <p className="card-figure">{usage.plan}</p>
          <p className="muted">Rate limit: {formatNumber(usage.rate_limit.per_second)} requests per second</p>
        </section>
        <section className="card" aria-labelledby="period-title">
          <h2 id="period-title" className="card-title">
            Billing period
          </h2>
          <p className="card-figure card-figure-small">
            {formatDay(usage.period_start)} – {formatDay(usage.period_end)}
          </p>
          <p className="muted">The quota resets on {formatDay(usage.quota.reset_at)} (00:00 UTC).</p>
        </section>
        <section className="card card-wide" aria-labelledby="quota-title">
          <h2 id="quota-title" className="card-title">
            Quota
          </h2>
          <UsageGauge usage={usage} />
        </section>
        <section className="card" aria-labelledby="overage-title">
          <h2 id="overage-title" className="card-title">
            Overage
          </h2>
          <OverageText usage={usage} cost={overview.overage_cost} />
        </section>
      </div>
      <section className="panel" aria-labelledby="daily-title">
        <div className="panel-head">
          <h2 id="daily-title">Verifications per day</h2>
          <a className="button" href={api.dailyUsageUrl()} download>
            Download CSV<span className="sr-only"> of verifications per day</span>
          </a>
        </div>
        <DailyChart current={daily.current} previous={daily.previous} today={today} />
      </section>
      <section className="panel" aria-labelledby="latest-title">
        <div className="panel-head">
          <h2 id="latest-title">Latest lists</h2>
          <Link href="/lists" className="button">
            All lists
          </Link>
        </div>
        {jobs.length === 0 ? (
          <EmptyState>
            <p>No lists yet.</p>
            <Link href="/lists">Upload a list to clean it</Link>
          </EmptyState>
        ) : (
          <JobsTable jobs={jobs} caption="Latest lists" />
        )}
      </section>
    </>
  );
}

export function OverviewPage() {
  const overview = useOverview();
  return (
    <>
      <PageTitle title="Overview">Overview</PageTitle>
      {overview.isPending ? <Loading what="your usage" /> : null}
      {overview.isError && !overview.data ? (
        <ErrorMessage action="Could not load the overview" error={overview.error} />
      ) : null}
      {overview.data?.suspension ? (
        <p role="alert" className="notice notice-warn">
          This account is suspended
          {overview.data.suspension.reason ? `: ${overview.data.suspension.reason}` : ''}. Its API keys are
          refused and its lists are paused until the operator resumes it.
        </p>
      ) : null}
      {overview.data ? <OverviewContent overview={overview.data} /> : null}
    </>
  );
}
