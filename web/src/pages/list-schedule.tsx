/**
 * A list's re-verification schedule and its history (docs/dashboard.md, "Re-verification on a
 * schedule"): "re-verify every N days" with the next run's time and a way to stop; then each run
 * (and the upload) with its counts and what changed since the previous run, and the changed rows
 * as CSV.
 *
 * Accessible names: section "Re-verification"; field "Re-verify every (days)"; buttons "Save
 * schedule", "Stop re-verifying"; table "History of <list>"; links "Download changed rows of the
 * run of <date>".
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import type { JobDetail, ListHistory } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { keys, useInvalidate, useListHistory } from '../api/queries';
import { formatDateTime, formatNumber, plural } from '../components/format';
import { ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';
import { JobStatusBadge } from '../components/verdict';
import { jobName } from './jobs-table';

export function ListSchedule({ detail }: { detail: JobDetail }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const { job, schedule } = detail;
  const [days, setDays] = useState(String(schedule?.every_days ?? 30));
  const save = useMutation({
    mutationFn: (every: number | null) => api.setSchedule(job.job_id, { every_days: every }),
    onSuccess: async () => invalidate(keys.job(job.job_id)),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(Number(days));
  };
  return (
    <>
      <p>
        {schedule
          ? `Re-verified every ${plural(schedule.every_days, 'day')}. Next run: ${formatDateTime(schedule.next_run_at)}.`
          : 'Not re-verified on a schedule.'}{' '}
        <span className="muted small">
          {job.mode === 'test'
            ? 'Each run is a new job of this list, in test mode: nothing is counted against the quota.'
            : 'Each run is a new job of this list and counts against the quota; a run the remaining quota cannot cover is skipped.'}
        </span>
      </p>
      <form className="form form-inline" onSubmit={submit}>
        <div className="field">
          <label htmlFor="schedule-days">Re-verify every (days)</label>
          <input
            id="schedule-days"
            className="input"
            type="number"
            min={1}
            max={365}
            step={1}
            required
            value={days}
            onChange={(event) => setDays(event.target.value)}
          />
        </div>
        <button type="submit" className="button button-primary" disabled={save.isPending}>
          Save schedule
        </button>
        {schedule ? (
          <button
            type="button"
            className="button"
            disabled={save.isPending}
            onClick={() => save.mutate(null)}
          >
            Stop re-verifying
          </button>
        ) : null}
      </form>
      <ErrorMessage action="Could not save the schedule" error={save.error} />
    </>
  );
}

type Run = ListHistory['runs'][number];

function RunChanges({ run }: { run: Run }) {
  const api = useEndpoints();
  if (run.kind === 'skipped') return <span className="muted">Skipped: the quota could not cover it</span>;
  if (run.kind === 'upload') return <span className="muted">First verification</span>;
  if (!run.changes) return <span className="muted">Not compared yet</span>;
  const { became_undeliverable: lost, became_deliverable: gained } = run.changes;
  return (
    <>
      <span>
        {formatNumber(lost)} became undeliverable, {formatNumber(gained)} became deliverable
      </span>
      {lost + gained > 0 && run.job_id ? (
        <>
          {' '}
          <a href={api.changesUrl(run.job_id)} download>
            Download changed rows
            <span className="sr-only"> of the run of {formatDateTime(run.created_at)}</span>
          </a>
        </>
      ) : null}
    </>
  );
}

export function ListHistoryTable({ detail }: { detail: JobDetail }) {
  const history = useListHistory(detail.job.job_id);
  if (history.isPending) return <Loading what="the history" />;
  if (history.isError) return <ErrorMessage action="Could not load the history" error={history.error} />;
  const caption = `History of ${jobName(detail.job)}`;
  return (
    <TableScroll label={caption}>
      <table className="table">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Addresses</th>
            <th scope="col">Deliverable</th>
            <th scope="col">Undeliverable</th>
            <th scope="col">Risky</th>
            <th scope="col">Unknown</th>
            <th scope="col">Since the previous run</th>
          </tr>
        </thead>
        <tbody>
          {history.data.runs.map((run) => (
            <tr key={run.job_id ?? `skipped-${run.created_at}`}>
              <th scope="row" className="nowrap">
                {run.job_id && run.job_id !== detail.job.job_id ? (
                  <Link href={`/lists/${encodeURIComponent(run.job_id)}`}>
                    {formatDateTime(run.created_at)}
                  </Link>
                ) : (
                  formatDateTime(run.created_at)
                )}
              </th>
              <td>{run.status ? <JobStatusBadge status={run.status} /> : '—'}</td>
              <td>{formatNumber(run.total)}</td>
              {(['deliverable', 'undeliverable', 'risky', 'unknown'] as const).map((verdict) => (
                <td key={verdict}>{run.counts ? formatNumber(run.counts[verdict] ?? 0) : '—'}</td>
              ))}
              <td>
                <RunChanges run={run} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
