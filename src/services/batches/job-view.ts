/** The job object as the API and webhooks show it (docs/jobs.md). */
import type { JobRow, JobStatus } from '../../store/schema/jobs.schema.js';

/** The states of a v1 job (docs/jobs.md): the store's, as they are. */
export { JOB_STATUSES } from '../../store/schema/jobs.schema.js';

/** The job object of GET /v1/jobs/:id, without request_id. Optional fields follow the contract's "Present" column. */
export interface JobView {
  job_id: string;
  status: JobStatus;
  total: number;
  processed?: number;
  valid?: number;
  invalid?: number;
  created_at: string;
  completed_at?: string;
  failed_at?: string;
  error?: string;
  results_expire_at: string;
  download_url?: string;
}

/** Whether the job's results are past retention at `now` (whether or not the sweep has run). */
export function resultsExpired(job: JobRow, now: Date): boolean {
  return job.results_deleted_at !== null || now.toISOString() >= job.results_expire_at;
}

export function toJobView(job: JobRow, publicBaseUrl: string, now: Date): JobView {
  const view: JobView = {
    job_id: job.id,
    status: job.status,
    total: job.total,
    created_at: job.created_at,
    results_expire_at: job.results_expire_at,
  };
  if (job.status !== 'queued') view.processed = job.processed;
  if (job.status === 'completed') {
    view.valid = job.valid_count;
    view.invalid = job.invalid_count;
    if (job.completed_at !== null) view.completed_at = job.completed_at;
  }
  if (job.status === 'failed') {
    if (job.failed_at !== null) view.failed_at = job.failed_at;
    view.error = job.error ?? 'failed';
  }
  if (job.status === 'completed' && !resultsExpired(job, now)) {
    view.download_url = `${publicBaseUrl}/v1/jobs/${encodeURIComponent(job.id)}/results`;
  }
  return view;
}
