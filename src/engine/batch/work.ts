/**
 * The units of work the batch scheduler moves between MX hosts: a recipient to probe, or a
 * domain's catch-all probe. Both know their domain's mail hosts so that a failing host can
 * hand them to the next one.
 */
import type { MailHost, SmtpOutcome } from '../outcome.js';

/** What a recipient reports back to: one `verifyMany` call. */
export interface RunLink {
  readonly aborted: boolean;
  /** The caller's name for the call (`VerifyManyOptions.label`). */
  readonly label: string | undefined;
  /** The SMTP outcome of `work` is decided. */
  settle(work: RecipientWork, outcome: SmtpOutcome): void;
}

export interface WorkBase {
  /** `local@domain` exactly as it goes into RCPT TO. */
  address: string;
  domain: string;
  /** The domain's mail hosts to try, in order (at most `maxMxHosts`). */
  hosts: readonly MailHost[];
  /** Which of `hosts` the work is queued at. */
  hostIndex: number;
  /** Which address of that host (a further one is tried only when one refuses the connection). */
  addressIndex: number;
  /** Sessions that failed while carrying it (connection lost before its reply). */
  drops: number;
  /**
   * Egresses that refused to ask about it by policy (our address, not the recipient) and handed
   * it to another egress; at most one fewer than the host's egresses (absent: none).
   */
  egressRefusals?: number;
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

/** The queue key of the work's current host: the address sessions connect to (what a server's limits count). */
export function hostKey(work: WorkBase): string {
  const host = work.hosts[work.hostIndex]!;
  return host.addresses[work.addressIndex] ?? host.exchange;
}

/**
 * Moves `work` to where it goes after its host failed: the host's next address when the
 * connection was refused (as the single probe does), otherwise the domain's next MX host.
 * False when there is nowhere left to go.
 */
export function moveOn(work: WorkBase, refused: boolean): boolean {
  const host = work.hosts[work.hostIndex]!;
  if (refused && work.addressIndex + 1 < host.addresses.length) {
    work.addressIndex += 1;
    return true;
  }
  if (work.hostIndex + 1 < work.hosts.length) {
    work.hostIndex += 1;
    work.addressIndex = 0;
    return true;
  }
  return false;
}
