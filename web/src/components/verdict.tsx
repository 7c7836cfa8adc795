/**
 * Verdicts and reasons in words. The colour of a verdict always comes with its name, so it reads
 * the same without colour. The sentences follow docs/verdicts.md.
 */
import type { Reason, Status } from '../api/contract';

export const VERDICT_LABEL: Record<Status, string> = {
  deliverable: 'Deliverable',
  risky: 'Risky',
  undeliverable: 'Undeliverable',
  unknown: 'Unknown',
};

export const VERDICT_MEANING: Record<Status, string> = {
  deliverable: 'The mail server accepted the mailbox.',
  risky: 'Mail may arrive, but the address is doubtful.',
  undeliverable: 'Mail to this address would bounce.',
  unknown: 'Nothing certain could be learned about the mailbox.',
};

export const REASON_TEXT: Record<Reason, string> = {
  invalid_email_format: 'The address is not well-formed.',
  smtp_rejected: 'The mail server said this mailbox does not exist.',
  mailbox_full: 'The mailbox exists but is full.',
  catch_all: 'The domain accepts every address, so this mailbox cannot be confirmed.',
  disposable_domain: 'The domain is a disposable (throw-away) mail service.',
  greylisted: 'The mail server asked to try again later (greylisting).',
  smtp_blocked: 'The mail server refused to answer about the mailbox (it refused the prober).',
  smtp_unavailable: 'No mail server could be reached.',
  smtp_timeout: 'The mail server did not answer in time.',
  smtp_unicode_unsupported: 'The address is not ASCII and the mail server does not accept such addresses.',
  dns_error: 'DNS could not answer, so the domain could not be checked.',
  domain_not_found: 'The domain does not exist.',
  no_mx_records: 'The domain has no mail server.',
  null_mx: 'The domain says it receives no mail (null MX).',
  test_mode: 'Test mode: no network check ran.',
  previously_bounced: 'Mail you sent to this address bounced, and nothing was delivered since.',
  complained: 'The owner of this address reported your mail as spam.',
  blocked_by_filter: 'One of your block filters matches this address.',
  allowed_by_filter: 'One of your allow filters matches this address.',
};

const isStatus = (value: string): value is Status => value in VERDICT_LABEL;

export function reasonText(reason: string | null): string {
  if (reason === null) return 'The mailbox was accepted.';
  return reason in REASON_TEXT ? REASON_TEXT[reason as Reason] : reason.replaceAll('_', ' ');
}

/** A verdict's name on its colour. */
export function VerdictBadge({ status }: { status: string }) {
  const known = isStatus(status);
  return (
    <span className={`badge verdict-${known ? status : 'other'}`}>
      {known ? VERDICT_LABEL[status] : status}
    </span>
  );
}

const JOB_STATUS_LABEL: Record<string, string> = {
  queued: 'Queued',
  processing: 'Processing',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

export function JobStatusBadge({ status }: { status: string }) {
  return <span className={`badge job-${status}`}>{JOB_STATUS_LABEL[status] ?? status}</span>;
}

/** A queued or processing job that waits because an operator suspended the account. */
export function PausedBadge({ paused }: { paused: 'account_suspended' | null }) {
  return paused === null ? null : <span className="badge job-paused">Paused: account suspended</span>;
}
