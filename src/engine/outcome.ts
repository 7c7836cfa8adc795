/**
 * What the network steps found out, before it becomes a verdict (verdict.ts). These are the
 * seams between the DNS resolver, the SMTP probe and the verdict table.
 */
import type { MxRecordInfo } from './types.js';

/** A mail host to try, with the addresses its name resolved to through the engine's resolver. */
export interface MailHost {
  exchange: string;
  priority: number;
  /** IPv4/IPv6 addresses to connect to (never resolved again through the system resolver). */
  addresses: string[];
  /**
   * The addresses of the family whose DNS answer had not come when the host was handed out (RFC
   * 8305 §3: IPv6 answered first, or IPv4 and the 50 ms Resolution Delay for IPv6 ran out):
   * resolves with them ([] when that family has none) for a Happy Eyeballs race already running.
   */
  lateAddresses?: Promise<string[]>;
}

export type DnsOutcome =
  /** Hosts in the order to try them: preference order, equal preferences shuffled. */
  | { kind: 'ok'; records: MxRecordInfo[]; implicit: boolean; hosts: MailHost[] }
  | { kind: 'nxdomain' }
  /** No MX and no A/AAAA, or every MX target is NXDOMAIN. */
  | { kind: 'no_mail_host'; records: MxRecordInfo[] }
  | { kind: 'null_mx' }
  /** SERVFAIL, timeout, refused...: the answer could not be found out. */
  | { kind: 'error'; detail: string };

/** The reply that decided the SMTP outcome, for `checks.smtp`. */
export interface SmtpEvidence {
  host: string | null;
  code: number | null;
  enhancedCode: string | null;
  message: string | null;
  tls: boolean;
  durationMs: number;
}

/**
 * `unicode_unsupported`: the local part is not ASCII and the server did not offer SMTPUTF8
 * (RFC 6531), so the recipient was not asked about (no RCPT TO was written for it).
 */
export type SmtpOutcomeKind =
  | 'accepted'
  | 'rejected'
  | 'mailbox_full'
  | 'greylisted'
  | 'blocked'
  | 'unavailable'
  | 'timeout'
  | 'unicode_unsupported';

export interface SmtpOutcome {
  kind: SmtpOutcomeKind;
  /** For 'accepted': whether a random local part at the same domain was accepted too; null when not tested. */
  catchAll: boolean | null;
  evidence: SmtpEvidence;
}
