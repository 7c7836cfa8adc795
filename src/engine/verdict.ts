/**
 * The verdict table: what the checks found out becomes a status, a reason and a score.
 * docs/verdicts.md documents every row, the precedence and the score bands; keep the three in
 * step.
 *
 * Precedence, first match wins:
 *  1. DNS says the domain cannot receive mail (nxdomain, no mail host, null MX): undeliverable.
 *  2. The SMTP server rejected the mailbox: undeliverable. Nothing about the address can help.
 *  3. Disposable domain: risky, whatever the mailbox answered.
 *  4. DNS failed: unknown.
 *  5. The SMTP outcome.
 *  6. Nothing ran (offline / test keys): unknown `test_mode`.
 */
import type { DnsOutcome, SmtpOutcome } from './outcome.js';
import type { Reason, Status } from './types.js';

export interface VerdictInput {
  disposable: boolean;
  role: boolean;
  free: boolean;
  /** null: DNS not run (offline / test mode, or an address literal). */
  dns: DnsOutcome | null;
  /** null: SMTP not run (DNS failed, or offline). */
  smtp: SmtpOutcome | null;
}

export interface Verdict {
  status: Status;
  /** null exactly when `valid`. */
  reason: Reason | null;
  /** true only for deliverable. */
  valid: boolean;
  score: number;
}

/** Inclusive score range of each status. Only deliverable reaches 60, so "accept >= 60" is sound. */
export const SCORE_BANDS: Readonly<Record<Status, { min: number; max: number }>> = {
  deliverable: { min: 70, max: 99 },
  risky: { min: 10, max: 59 },
  unknown: { min: 20, max: 59 },
  undeliverable: { min: 0, max: 9 },
};

/** The score before the role/free penalties, per reason (`deliverable` for reason null). */
export const BASE_SCORES: Readonly<Record<Reason | 'deliverable', number>> = {
  deliverable: 95,
  catch_all: 55,
  mailbox_full: 35,
  disposable_domain: 15,
  greylisted: 45,
  smtp_timeout: 40,
  smtp_blocked: 35,
  smtp_unavailable: 30,
  test_mode: 30,
  dns_error: 25,
  smtp_unicode_unsupported: 25,
  smtp_rejected: 5,
  no_mx_records: 3,
  domain_not_found: 2,
  null_mx: 1,
  invalid_email_format: 0,
  // The account's own data (services/outcomes/): never decided by the engine.
  allowed_by_filter: 95,
  complained: 20,
  blocked_by_filter: 6,
  previously_bounced: 4,
};

/**
 * Points taken off for a role address and for a free provider. Small against each band's
 * width, so no combination leaves the band; undeliverable keeps its fixed score.
 */
export const FLAG_PENALTIES: Readonly<Record<Status, { role: number; free: number }>> = {
  deliverable: { role: 5, free: 3 },
  risky: { role: 2, free: 1 },
  unknown: { role: 2, free: 1 },
  undeliverable: { role: 0, free: 0 },
};

export const STATUS_OF: Readonly<Record<Reason, Status>> = {
  invalid_email_format: 'undeliverable',
  domain_not_found: 'undeliverable',
  no_mx_records: 'undeliverable',
  null_mx: 'undeliverable',
  smtp_rejected: 'undeliverable',
  catch_all: 'risky',
  mailbox_full: 'risky',
  disposable_domain: 'risky',
  greylisted: 'unknown',
  smtp_blocked: 'unknown',
  smtp_unavailable: 'unknown',
  smtp_timeout: 'unknown',
  smtp_unicode_unsupported: 'unknown',
  dns_error: 'unknown',
  test_mode: 'unknown',
  previously_bounced: 'undeliverable',
  complained: 'risky',
  blocked_by_filter: 'undeliverable',
  allowed_by_filter: 'deliverable',
};

/** Applies the verdict table (precedence above) and scores the result. Pure and deterministic. */
export function decideVerdict(input: VerdictInput): Verdict {
  const reason = decideReason(input);
  const status: Status = reason === null ? 'deliverable' : STATUS_OF[reason];
  const penalty = FLAG_PENALTIES[status];
  const score =
    BASE_SCORES[reason ?? 'deliverable'] - (input.role ? penalty.role : 0) - (input.free ? penalty.free : 0);
  return { status, reason, valid: reason === null, score };
}

/** The verdict for an address that failed the syntax check. */
export function invalidFormatVerdict(): Verdict {
  return { status: 'undeliverable', reason: 'invalid_email_format', valid: false, score: 0 };
}

function decideReason({ disposable, dns, smtp }: VerdictInput): Reason | null {
  const dnsReason = dns === null ? null : reasonFromDns(dns);
  if (dnsReason !== null && dnsReason !== 'dns_error') return dnsReason;
  if (smtp?.kind === 'rejected') return 'smtp_rejected';
  if (disposable) return 'disposable_domain';
  if (dnsReason === 'dns_error') return 'dns_error';
  if (smtp !== null) return reasonFromSmtp(smtp);
  // DNS found mail hosts but no probe ran (the caller skipped it): no answer was obtained.
  if (dns !== null) return 'smtp_unavailable';
  return 'test_mode';
}

function reasonFromDns(dns: DnsOutcome): Reason | null {
  switch (dns.kind) {
    case 'ok':
      return null;
    case 'nxdomain':
      return 'domain_not_found';
    case 'no_mail_host':
      return 'no_mx_records';
    case 'null_mx':
      return 'null_mx';
    case 'error':
      return 'dns_error';
  }
}

function reasonFromSmtp(smtp: SmtpOutcome): Reason | null {
  switch (smtp.kind) {
    case 'accepted':
      return smtp.catchAll === true ? 'catch_all' : null;
    case 'rejected':
      return 'smtp_rejected';
    case 'mailbox_full':
      return 'mailbox_full';
    case 'greylisted':
      return 'greylisted';
    case 'blocked':
      return 'smtp_blocked';
    case 'unavailable':
      return 'smtp_unavailable';
    case 'timeout':
      return 'smtp_timeout';
    case 'unicode_unsupported':
      return 'smtp_unicode_unsupported';
  }
}
