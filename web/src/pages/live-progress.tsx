/**
 * A list's progress across the whole card: the bar, how many are verified, and while the job
 * runs the rate (addresses a second, measured between the polls this page has seen, so a queue
 * wait does not count) and the estimated time left at that rate.
 *
 * Accessible names: progress bar "Progress of <list>".
 */
import { useRef } from 'react';
import type { JobItem } from '../api/contract';
import { formatNumber, formatPercent } from '../components/format';
import { jobName } from './jobs-table';

interface Sample {
  processed: number;
  at: number;
}

/** Addresses a second between two samples; null until the count has moved. */
export function rateBetween(first: Sample | null, last: Sample | null): number | null {
  if (!first || !last || last.at <= first.at || last.processed <= first.processed) return null;
  return (last.processed - first.processed) / ((last.at - first.at) / 1000);
}

/** "45 s", "12 min", "2 h 5 min". */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The first and the latest count seen while the job is processing, with when they arrived. */
function useSamples(job: JobItem): { first: Sample | null; last: Sample | null } {
  const first = useRef<Sample | null>(null);
  const last = useRef<Sample | null>(null);
  if (job.status === 'processing' && last.current?.processed !== job.processed) {
    const sample = { processed: job.processed, at: Date.now() };
    first.current ??= sample;
    last.current = sample;
  }
  return { first: first.current, last: last.current };
}

export function LiveProgress({ job }: { job: JobItem }) {
  const { first, last } = useSamples(job);
  const running = job.status === 'processing';
  const rate = running ? rateBetween(first, last) : null;
  const left = Math.max(0, job.total - job.processed);
  return (
    <div className="progress-wide">
      <progress
        value={job.processed}
        max={Math.max(1, job.total)}
        aria-label={`Progress of ${jobName(job)}`}
        aria-valuetext={`${formatNumber(job.processed)} of ${formatNumber(job.total)} verified`}
      />
      <p className="progress-figures small">
        <span>
          {formatNumber(job.processed)} of {formatNumber(job.total)} verified (
          {formatPercent(job.processed, job.total)})
        </span>
        {running ? (
          rate === null ? (
            <span className="muted">Measuring the rate…</span>
          ) : (
            <>
              <span>{formatNumber(Math.round(rate * 10) / 10)} addresses a second</span>
              <span>About {formatDuration(left / rate)} left</span>
            </>
          )
        ) : null}
        {job.status === 'queued' ? <span className="muted">Waiting for a worker…</span> : null}
      </p>
    </div>
  );
}
