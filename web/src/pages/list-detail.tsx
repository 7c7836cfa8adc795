/**
 * One list (a batch job): its state and live progress (polled while it runs), counts by verdict
 * and by reason once done, and the download of all rows or only the chosen verdicts, with the
 * uploaded file's other columns beside the verdict columns.
 *
 * Accessible names: heading = the list's name; progress bar "Progress of <list>"; figures "By
 * verdict" and "By reason"; group "Rows to download" with checkboxes Deliverable, Risky,
 * Undeliverable, Unknown; link "Download CSV"; button "Stop this job"; link "All lists".
 */
import { useState } from 'react';
import { Link } from 'wouter';
import { ApiError } from '../api/client';
import { VERDICTS, type JobDetail, type Status } from '../api/contract';
import { isActive, useJob } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { Choice } from '../components/choice';
import { CountBars } from '../components/count-bars';
import { formatDateTime, plural } from '../components/format';
import { PageTitle } from '../components/shell';
import { ErrorMessage, Loading } from '../components/status';
import { JobStatusBadge, VERDICT_LABEL, reasonText } from '../components/verdict';
import { CancelJobButton } from './cancel-job';
import { JobProgress, jobName } from './jobs-table';

/** The download's query: none when every verdict is wanted (all rows). */
export function downloadQuery(chosen: readonly Status[]): { verdicts?: string } {
  return chosen.length === VERDICTS.length
    ? {}
    : { verdicts: VERDICTS.filter((v) => chosen.includes(v)).join(',') };
}

function Download({ detail }: { detail: JobDetail }) {
  const api = useEndpoints();
  const [chosen, setChosen] = useState<Status[]>([...VERDICTS]);
  const { job, counts } = detail;
  if (!job.downloadable) {
    return (
      <p className="muted">
        {isActive(job)
          ? 'The results can be downloaded once the job is done.'
          : `The results are no longer available (they were kept until ${formatDateTime(job.results_expire_at)}).`}
      </p>
    );
  }
  const rows = chosen.reduce((sum, verdict) => sum + (counts?.by_status[verdict] ?? 0), 0);
  const href = api.downloadUrl(job.job_id, downloadQuery(chosen));
  return (
    <div className="download">
      <fieldset className="fieldset">
        <legend>Rows to download</legend>
        {VERDICTS.map((verdict) => (
          <Choice
            key={verdict}
            inline
            type="checkbox"
            label={
              <>
                {VERDICT_LABEL[verdict]}
                {counts ? <span className="muted small"> ({counts.by_status[verdict] ?? 0})</span> : null}
              </>
            }
            checked={chosen.includes(verdict)}
            onChange={(on) =>
              setChosen((current) =>
                on ? [...current, verdict] : current.filter((item) => item !== verdict),
              )
            }
          />
        ))}
      </fieldset>
      <p className="hint">
        {job.has_original_columns
          ? 'The file keeps your original columns, followed by status, score and reason.'
          : 'The file has the address followed by status, score and reason.'}{' '}
        Results are kept until {formatDateTime(job.results_expire_at)}.
      </p>
      {chosen.length === 0 ? (
        <p className="notice notice-info">Choose at least one verdict to download.</p>
      ) : (
        <a className="button button-primary" href={href} download>
          Download CSV
          <span className="sr-only"> ({counts ? plural(rows, 'row') : 'chosen rows'})</span>
        </a>
      )}
    </div>
  );
}

function Counts({ detail }: { detail: JobDetail }) {
  const { counts } = detail;
  if (!counts) return null;
  const byStatus = VERDICTS.map((verdict) => ({
    key: verdict,
    label: VERDICT_LABEL[verdict],
    count: counts.by_status[verdict] ?? 0,
    tone: `tone-${verdict}`,
  }));
  const byReason = Object.entries(counts.by_reason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => ({
      key: reason,
      label: reasonText(reason),
      count,
    }));
  return (
    <div className="grid-2">
      <CountBars title="By verdict" bars={byStatus} />
      <CountBars title="By reason" bars={byReason} />
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
            <JobStatusBadge status={job.status} />
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
        <JobProgress job={job} />
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
        <Download detail={detail.data} />
      </section>
    </>
  );
}
