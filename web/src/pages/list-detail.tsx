/**
 * One list (a batch job): its state and live progress across the card with rate and time left
 * (polled while it runs), counts by verdict and by reason once done (each a share of the total,
 * verdicts in their colours), the download (list-download.tsx), and for an uploaded list its
 * re-verification schedule and history (list-schedule.tsx).
 *
 * Accessible names: heading = the list's name; progress bar "Progress of <list>"; figures "By
 * verdict" and "By reason"; the download's (list-download.tsx); button "Stop this job"; link
 * "All lists".
 */
import { Link } from 'wouter';
import { ApiError } from '../api/client';
import { VERDICTS, type JobDetail } from '../api/contract';
import { isActive, useJob } from '../api/queries';
import { CountBars } from '../components/count-bars';
import { formatDateTime } from '../components/format';
import { PageTitle } from '../components/shell';
import { ErrorMessage, Loading } from '../components/status';
import { JobStatusBadge, PausedBadge, VERDICT_LABEL, reasonText } from '../components/verdict';
import { CancelJobButton } from './cancel-job';
import { jobName } from './jobs-table';
import { ListDownload } from './list-download';
import { ListHistoryTable, ListSchedule } from './list-schedule';
import { LiveProgress } from './live-progress';

function Counts({ detail }: { detail: JobDetail }) {
  const { counts } = detail;
  if (!counts) return null;
  const byStatus = VERDICTS.map((verdict) => ({
    key: verdict,
    label: VERDICT_LABEL[verdict],
    count: counts.by_status[verdict] ?? 0,
    tone: `tone-${verdict}`,
  }));
  // One base for every share on the page: the list's rows (every row has a verdict).
  const rows = byStatus.reduce((sum, bar) => sum + bar.count, 0);
  const byReason = Object.entries(counts.by_reason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => ({
      key: reason,
      label: reasonText(reason),
      count,
    }));
  return (
    <div className="grid-2">
      <CountBars title="By verdict" bars={byStatus} total={rows} />
      <CountBars title="By reason" bars={byReason} total={rows} />
    </div>
  );
}

export function ListDetailPage({ id }: { id: string }) {
  const detail = useJob(id);
  if (detail.isPending) return <Loading what="the list" />;
  if (detail.isError && !detail.data) {
    const missing = detail.error instanceof ApiError && detail.error.status === 404;
    return (
      <>
        <PageTitle title="List">List not found</PageTitle>
        {missing ? (
          <p className="notice notice-error" role="alert">
            No list of this account has that id.
          </p>
        ) : (
          <ErrorMessage action="Could not load the list" error={detail.error} />
        )}
        <Link href="/lists">All lists</Link>
      </>
    );
  }
  const { job } = detail.data;
  return (
    <>
      <p className="breadcrumb">
        <Link href="/lists">All lists</Link>
      </p>
      <div className="page-head">
        <PageTitle title={jobName(job)}>{jobName(job)}</PageTitle>
        {isActive(job) ? <CancelJobButton job={job} label="Stop this job" /> : null}
      </div>
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <JobStatusBadge status={job.status} /> <PausedBadge paused={job.paused} />
          </dd>
        </div>
        <div>
          <dt>Mode</dt>
          <dd>{job.mode === 'live' ? 'Live' : 'Test'}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDateTime(job.created_at)}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>{formatDateTime(job.completed_at, isActive(job) ? 'Not yet' : '—')}</dd>
        </div>
      </dl>
      <section className="panel" aria-labelledby="progress-title">
        <h2 id="progress-title">Progress</h2>
        <LiveProgress job={job} />
        {job.status === 'failed' ? (
          <p className="notice notice-error">The job failed. Addresses it did not verify were refunded.</p>
        ) : null}
      </section>
      {detail.data.counts ? (
        <section className="panel" aria-labelledby="results-title">
          <h2 id="results-title">Results</h2>
          <Counts detail={detail.data} />
        </section>
      ) : null}
      <section className="panel" aria-labelledby="download-title">
        <h2 id="download-title">Download</h2>
        <ListDownload detail={detail.data} />
      </section>
      {job.has_original_columns ? (
        <>
          <section className="panel" aria-labelledby="schedule-title">
            <h2 id="schedule-title">Re-verification</h2>
            <ListSchedule detail={detail.data} />
          </section>
          <section className="panel" aria-labelledby="history-title">
            <h2 id="history-title">History</h2>
            <ListHistoryTable detail={detail.data} />
          </section>
        </>
      ) : null}
    </>
  );
}
