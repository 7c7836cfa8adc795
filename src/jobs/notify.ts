/**
 * The completion e-mail: a short summary of the job and its download link, sent to the
 * account's address through the process's mailer (services/mailer.ts).
 */
import type { Mailer } from '../services/mailer.js';
import type { JobView } from '../services/batches/job-view.js';

export interface Notifier {
  send(to: string, job: JobView): Promise<void>;
}

/** The notifier over the process's mailer, or null without one (notifications are then skipped). */
export function createMailNotifier(mailer: Mailer | null | undefined): Notifier | null {
  if (!mailer) return null;
  return { send: (to, job) => mailer.send({ to, ...notificationMessage(job) }) };
}

export function notificationMessage(job: JobView): { subject: string; text: string } {
  const valid = job.valid ?? 0;
  const invalid = job.invalid ?? 0;
  const lines = [
    `Your batch verification job ${job.job_id} has completed.`,
    '',
    `Addresses:        ${job.total}`,
    `Valid:            ${valid}`,
    `Invalid:          ${invalid}`,
    `Risky or unknown: ${job.total - valid - invalid}`,
    '',
    job.download_url === undefined
      ? 'The results are no longer available.'
      : `Download the results (CSV; add ?format=json for JSON) with your API key:\n${job.download_url}`,
    `Results are kept until ${job.results_expire_at}.`,
  ];
  return {
    subject: `Batch job ${job.job_id} completed: ${valid} of ${job.total} valid`,
    text: `${lines.join('\n')}\n`,
  };
}

/** `a***@example.com`: enough to recognise an address in a log line, not to harvest it. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address[0]}***${address.slice(at)}`;
}
