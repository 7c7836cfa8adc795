/**
 * The e-mail telling an account's members that a scheduled re-verification was skipped because
 * the remaining quota could not cover it. Sent through the configured SMTP relay with nodemailer,
 * as member-mail.ts sends links; without a relay there is no mailer and the overview's notice is
 * the only word of it.
 */
import nodemailer from 'nodemailer';
import { SECOND } from '../clock.js';
import type { Config } from '../config.js';

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
  close(): void;
}

const RELAY_TIMEOUT_MS = 15 * SECOND;

export function createScheduleMailer(
  config: Pick<Config, 'smtpRelayUrl' | 'notifyFrom'>,
): ScheduleMailer | null {
  if (config.smtpRelayUrl === null) return null;
  const transport = nodemailer.createTransport({
    url: config.smtpRelayUrl,
    connectionTimeout: RELAY_TIMEOUT_MS,
    greetingTimeout: RELAY_TIMEOUT_MS,
    socketTimeout: RELAY_TIMEOUT_MS,
  });
  return {
    async sendSkipped(to, run) {
      const message = skippedMessage(run);
      await transport.sendMail({
        from: config.notifyFrom,
        to: [...to],
        subject: message.subject,
        text: message.text,
      });
    },
    close: () => transport.close(),
  };
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
