import type { ReactNode } from 'react';
import { Link } from 'wouter';
import type { JobItem } from '../api/contract';
import { formatDateTime, formatNumber, formatPercent } from '../components/format';
import { JobStatusBadge, PausedBadge } from '../components/verdict';
import { TableScroll } from '../components/table-scroll';

export const jobName = (job: JobItem): string => job.name ?? `API batch ${job.job_id}`;

/** A job's progress as a progress bar named after the list ("Progress of leads.csv"). */
export function JobProgress({ job }: { job: JobItem }) {
  return (
    <span className="progress">
      <progress
        value={job.processed}
        max={Math.max(1, job.total)}
        aria-label={`Progress of ${jobName(job)}`}
        aria-valuetext={`${formatNumber(job.processed)} of ${formatNumber(job.total)} verified`}
      />
      <span className="small muted">
        {formatNumber(job.processed)} / {formatNumber(job.total)} ({formatPercent(job.processed, job.total)})
      </span>
    </span>
  );
}

/** Jobs as a table; the name links to the job's page. */
export function JobsTable({
  jobs,
  caption,
  actions,
}: {
  jobs: JobItem[];
  caption: string;
  actions?: (job: JobItem) => ReactNode;
}) {
  return (
    <TableScroll label={caption}>
      <table className="table">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">List</th>
            <th scope="col">Status</th>
            <th scope="col">Progress</th>
            <th scope="col">Mode</th>
            <th scope="col">Created</th>
            {actions ? (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => (
            <tr key={job.job_id}>
              <th scope="row" className="cell-name">
                <Link href={`/lists/${encodeURIComponent(job.job_id)}`}>{jobName(job)}</Link>
              </th>
              <td>
                <JobStatusBadge status={job.status} /> <PausedBadge paused={job.paused} />
              </td>
              <td>
                <JobProgress job={job} />
              </td>
              <td>{job.mode === 'live' ? 'Live' : 'Test'}</td>
              <td className="nowrap">{formatDateTime(job.created_at)}</td>
              {actions ? <td className="cell-actions">{actions(job)}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
