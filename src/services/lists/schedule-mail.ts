/**
 * The e-mail telling an account's members that a scheduled re-verification was skipped because
 * the remaining quota could not cover it. Sent through the process's mailer (mailer.ts); without a
 * relay there is no mailer and the overview's notice is the only word of it.
 */
import type { Mailer } from '../mailer.js';

export interface SkippedRun {
  listName: string;
  /** The dashboard page of the list. */
  link: string;
  need: number;
  nextRunAt: string;
}

export interface ScheduleMailer {
  /** Rejects when the relay does not take the message. */
  sendSkipped(to: readonly string[], run: SkippedRun): Promise<void>;
}

export function createScheduleMailer(mailer: Mailer | null | undefined): ScheduleMailer | null {
  if (!mailer) return null;
  return { sendSkipped: (to, run) => mailer.send({ to, ...skippedMessage(run) }) };
}

export function skippedMessage(run: SkippedRun): { subject: string; text: string } {
  // The list's name is the user's own text: one line of it, nothing that could start a header.
  const name = run.listName.replace(/[\r\n\t]+/g, ' ').slice(0, 200);
  const lines = [
    `The scheduled re-verification of the list "${name}" was skipped: the remaining quota could not cover its ${run.need} addresses.`,
    '',
    `The next run is planned for ${run.nextRunAt}; it runs if the quota covers it then.`,
    `The list: ${run.link}`,
  ];
  return {
    subject: `Scheduled re-verification skipped: ${name.slice(0, 80)}`,
    text: `${lines.join('\n')}\n`,
  };
}
