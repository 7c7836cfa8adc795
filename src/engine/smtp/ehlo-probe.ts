/**
 * The shortest useful SMTP conversation: connect (directly, from a source address, or through a
 * SOCKS5 proxy), read the banner, say EHLO and QUIT. It tells whether outbound port 25 works
 * from an egress and whether a mail server accepts its greeting; and since many servers echo the
 * client's address in their EHLO reply ("250-mx.example Hello [203.0.113.7]"), it tells the
 * egress's public address where it is otherwise unknown (NAT, a proxy). No STARTTLS: nothing
 * private is said.
 */
import { isIP } from 'node:net';
import type { SocksProxyOptions, SmtpErrorKind } from './connection.js';
import { SmtpConnection, SmtpConnectionError } from './connection.js';
import type { SmtpReply } from './reply.js';

export interface EhloProbeOptions {
  port: number;
  heloName: string;
  proxy: SocksProxyOptions | null;
  /** The source address to connect from; null: the system's choice. */
  localAddress: string | null;
  /** For the connection and each reply. */
  timeoutMs: number;
}

export type EhloProbeResult =
  | {
      ok: true;
      banner: SmtpReply;
      ehlo: SmtpReply;
      /** The client address the server echoed in its EHLO (or HELO) reply, if it did. */
      echoedAddress: string | null;
    }
  | {
      ok: false;
      stage: 'connect' | 'banner' | 'ehlo';
      /** `reply`: the server answered with a refusal (in `reply`); otherwise how the connection failed. */
      cause: 'reply' | SmtpErrorKind;
      reply: SmtpReply | null;
      detail: string;
    };

/** Greets the mail server at `address` and says goodbye. Never rejects. */
export async function probeEhlo(address: string, options: EhloProbeOptions): Promise<EhloProbeResult> {
  let connection: SmtpConnection | null = null;
  let stage: 'connect' | 'banner' | 'ehlo' = 'connect';
  let closed: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (closed = resolve));
  const deadline = (): number => performance.now() + options.timeoutMs;
  try {
    connection = await SmtpConnection.open({
      address,
      port: options.port,
      deadlineAt: deadline(),
      proxy: options.proxy,
      localAddress: options.localAddress,
      closeBy: deadline,
      onClose: () => closed(),
    });
    stage = 'banner';
    const banner = connection.banner;
    if (banner.code !== 220) return refused(connection, released, stage, banner);
    stage = 'ehlo';
    connection.setDeadline(deadline());
    const ehlo = await connection.ehlo(options.heloName);
    if (ehlo.code < 200 || ehlo.code >= 300) return refused(connection, released, stage, ehlo);
    connection.quit();
    await released;
    return { ok: true, banner, ehlo, echoedAddress: echoedAddress(ehlo) };
  } catch (error) {
    connection?.destroy();
    if (!(error instanceof SmtpConnectionError)) throw error;
    // The TCP connection was made but the banner never came: the stage is the banner.
    if (connection === null && !['refused', 'unreachable', 'proxy'].includes(error.kind)) stage = 'banner';
    return { ok: false, stage, cause: error.kind, reply: null, detail: error.message };
  }
}

async function refused(
  connection: SmtpConnection,
  released: Promise<void>,
  stage: 'banner' | 'ehlo',
  reply: SmtpReply,
): Promise<EhloProbeResult> {
  connection.quit();
  await released;
  return { ok: false, stage, cause: 'reply', reply, detail: `${reply.code} ${reply.message}` };
}

// "[203.0.113.7]", "[IPv6:2001:db8::7]" or "(203.0.113.7)", as Exim, Gmail, Microsoft and
// smtp-server write it; Postfix does not echo the address at all.
const ECHO = /[[(](?:ipv6:)?([0-9a-f:.]+)[\])]/gi;

/** The client address a greeting reply's first line echoes, or null. */
export function echoedAddress(reply: SmtpReply): string | null {
  const first = reply.lines[0] ?? '';
  for (const match of first.matchAll(ECHO)) {
    const candidate = match[1]!;
    if (isIP(candidate) !== 0) return candidate;
  }
  return null;
}
