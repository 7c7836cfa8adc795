/**
 * The one way the service sends e-mail of its own (job notifications, dashboard links and
 * security notices, the publishable-key cap notice, a skipped scheduled run): one nodemailer
 * transport to the configured SMTP relay, built once per process by the runtime and handed to
 * whatever composes a message. Without a relay there is no mailer, and each sender says what
 * happens instead (a link shown, a notice on the overview).
 *
 * Every message is plain text to addresses the service holds; the relay is the operator's own
 * (`--smtp-relay-url`), so it is not SSRF-checked like a webhook's target.
 */
import nodemailer from 'nodemailer';
import { SECOND } from '../clock.js';
import type { Config } from '../config.js';

export interface MailMessage {
  to: string | readonly string[];
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the relay has taken the message; rejects when it does not. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * A relay that does not answer must not hold a dashboard request, a delivery attempt or a
 * scheduler tick for nodemailer's default minutes: connect, greeting and every read at 15 s.
 */
export const RELAY_TIMEOUT_MS = 15 * SECOND;

/** The relay's mailer, or null when no relay is configured. */
export function createMailer(config: Pick<Config, 'smtpRelayUrl' | 'notifyFrom'>): Mailer | null {
  if (config.smtpRelayUrl === null) return null;
  const transport = nodemailer.createTransport({
    url: config.smtpRelayUrl,
    connectionTimeout: RELAY_TIMEOUT_MS,
    greetingTimeout: RELAY_TIMEOUT_MS,
    socketTimeout: RELAY_TIMEOUT_MS,
  });
  return {
    async send(message) {
      await transport.sendMail({
        from: config.notifyFrom,
        to: typeof message.to === 'string' ? message.to : [...message.to],
        subject: message.subject,
        text: message.text,
      });
    },
    close: () => transport.close(),
  };
}
