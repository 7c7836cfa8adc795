/**
 * The e-mail telling an account that one of its publishable keys reached its daily cap (issue 26):
 * a public token, so whoever reads the page may be spending it. Sent through the process's mailer
 * (mailer.ts); without a relay there is no mailer and the overview's notice and the security log
 * are the only word of it.
 */
import type { Mailer } from '../mailer.js';

export interface CapReached {
  keyName: string | null;
  /** e.g. `svc_live_pub_…a1B2`: never the secret. */
  keyDisplay: string;
  dailyCap: number;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  /** The dashboard's keys page. */
  link: string;
}

export interface CapMailer {
  /** Rejects when the relay does not take the message. */
  sendCapReached(to: string, event: CapReached): Promise<void>;
}

export function createCapMailer(mailer: Mailer | null | undefined): CapMailer | null {
  if (!mailer) return null;
  return { sendCapReached: (to, event) => mailer.send({ to, ...capReachedMessage(event) }) };
}

export function capReachedMessage(event: CapReached): { subject: string; text: string } {
  // The key's name is the user's own text: one line of it, nothing that could start a header.
  const name = (event.keyName ?? event.keyDisplay).replace(/[\r\n\t]+/g, ' ').slice(0, 100);
  const lines = [
    `The publishable key "${name}" (${event.keyDisplay}) reached its daily cap of ${event.dailyCap} verifications on ${event.day} (UTC).`,
    '',
    'Until 00:00 UTC its requests are refused (429); the page that uses it cannot verify addresses meanwhile.',
    'A publishable key is public: anyone who reads the page can spend it. If this traffic is not your visitors’,',
    'lower the cap, rotate the key or revoke it.',
    '',
    `Your keys: ${event.link}`,
  ];
  return {
    subject: `Publishable key reached its daily cap: ${name.slice(0, 60)}`,
    text: `${lines.join('\n')}\n`,
  };
}
