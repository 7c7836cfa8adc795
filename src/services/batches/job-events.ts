/**
 * Queues a finished job's events in the delivery outbox, inside the transaction that finished
 * the job: the event exists exactly when the state change does, and survives a restart.
 */
import type { Config } from '../../config.js';
import { insertDelivery } from '../../store/delivery.store.js';
import type { Executor } from '../../store/executor.js';
import type { JobRow } from '../../store/schema/jobs.schema.js';
import { randomBase62 } from '../ids.js';
import { toJobView } from './job-view.js';

export type JobEventType = 'job.completed' | 'job.failed';

/** Webhook on completion and on failure (cancellation included); e-mail on completion when notify_email. */
export async function enqueueJobEvents(
  db: Executor,
  job: JobRow,
  config: Readonly<Config>,
  now: Date,
): Promise<void> {
  const type: JobEventType = job.status === 'completed' ? 'job.completed' : 'job.failed';
  const payload = JSON.stringify({ type, data: toJobView(job, config.publicBaseUrl, now) });
  const at = now.toISOString();
  const base = {
    job_id: job.id,
    account_id: job.account_id,
    event_type: type,
    payload,
    state: 'pending' as const,
    next_attempt_at: at,
    created_at: at,
  };
  if (job.webhook_url !== null) {
    await insertDelivery(db, {
      ...base,
      id: `msg_${randomBase62(24)}`,
      channel: 'webhook',
      target: job.webhook_url,
    });
  }
  if (type === 'job.completed' && job.notify_email === 1) {
    await insertDelivery(db, { ...base, id: `msg_${randomBase62(24)}`, channel: 'email', target: null });
  }
}
