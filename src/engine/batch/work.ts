/**
 * The units of work the batch scheduler moves between MX hosts: a recipient to probe, or a
 * domain's catch-all probe. Both know their domain's mail hosts so that a failing host can
 * hand them to the next one.
 */
import type { MailHost, SmtpOutcome } from '../outcome.js';

/** What a recipient reports back to: one `verifyMany` call. */
export interface RunLink {
  readonly aborted: boolean;
  /** The SMTP outcome of `work` is decided. */
  settle(work: RecipientWork, outcome: SmtpOutcome): void;
}

interface WorkBase {
  /** `local@domain` exactly as it goes into RCPT TO. */
  address: string;
  domain: string;
  /** The domain's mail hosts to try, in order (at most `maxMxHosts`). */
  hosts: readonly MailHost[];
  /** Which of `hosts` the work is queued at. */
  hostIndex: number;
  /** Sessions that failed while carrying it (connection lost before its reply). */
  drops: number;
}

export interface RecipientWork extends WorkBase {
  kind: 'rcpt';
  run: RunLink;
  /** The run's own reference to the address (its index among the distinct addresses). */
  id: number;
  /** Tries that ended greylisted (4xx) so far. */
  greylistTries: number;
}

export interface CatchAllWork extends WorkBase {
  kind: 'catch-all';
}

export type Work = RecipientWork | CatchAllWork;

/** The queue key of a mail host: its first address (what the server's limits count). */
export function hostKey(host: MailHost): string {
  return host.addresses[0] ?? host.exchange;
}
