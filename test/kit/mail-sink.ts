/**
 * An SMTP relay on loopback that keeps the mail it is given: where the service's notification and
 * invitation e-mails go in tests (`--smtp-relay-url`). Mail is received by `smtp-server`, as a
 * real relay would take it.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface MailSink {
  /** smtp://127.0.0.1:<port>, for --smtp-relay-url. */
  url: string;
  /** Each message's recipients, its text with quoted-printable soft breaks undone, and its data as sent. */
  messages: { to: string[]; text: string; data: string }[];
  close(): Promise<void>;
}

/** Starts the relay on a free loopback port. */
export async function startMailSink(): Promise<MailSink> {
  const messages: MailSink['messages'] = [];
  const sink = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (c: Buffer) => (data += c.toString()));
      stream.on('end', () => {
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          text: data.replace(/=\r?\n/g, ''),
          data,
        });
        callback();
      });
    },
  });
  sink.listen(0, '127.0.0.1');
  await once(sink.server, 'listening');
  const port = (sink.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise((resolve) => sink.close(() => resolve())),
  };
}
