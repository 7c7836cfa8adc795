/**
 * RFC 6531 on the wire: a local part that is not ASCII (`jörg@…`) may go into RCPT TO only in a
 * session whose server offered SMTPUTF8, with `SMTPUTF8` on the MAIL FROM before it. Where the
 * server did not offer it, the recipient is not asked about at all and ends as
 * `unicode_unsupported` (reason `smtp_unicode_unsupported`); the single probe and the batch
 * engine apply the same rule.
 *
 * Only the local part can need the extension: syntax.ts turns every domain into its ASCII
 * (A-label, punycode) form, and address literals are ASCII.
 */
import type { SmtpOutcome } from '../outcome.js';
import { needsSmtpUtf8 } from '../syntax.js';

/** Evidence text of a recipient that was not asked about. */
export const UNICODE_UNSUPPORTED_DETAIL =
  'not asked: the local part is not ASCII and the server does not offer SMTPUTF8 (RFC 6531)';

/** True when `address` (`local@domain` as it goes into RCPT TO) needs SMTPUTF8. */
export function addressNeedsSmtpUtf8(address: string): boolean {
  // A quoted local part may hold an "@"; the domain never does.
  return needsSmtpUtf8(address.slice(0, address.lastIndexOf('@')));
}

/** The outcome of a recipient that was not asked about because the server lacks SMTPUTF8. */
export function unicodeUnsupported(host: string | null, tls: boolean, durationMs: number): SmtpOutcome {
  return {
    kind: 'unicode_unsupported',
    catchAll: null,
    evidence: { host, code: null, enhancedCode: null, message: UNICODE_UNSUPPORTED_DETAIL, tls, durationMs },
  };
}
