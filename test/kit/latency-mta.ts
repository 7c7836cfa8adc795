/**
 * A mail host behind a slow network, on the kit's raw SMTP server (smtp-core.ts): every reply
 * comes one round trip (2 × `oneWayMs`) after the command that asked for it, the banner two round
 * trips after the connection (TCP's handshake and the banner), the 220 to STARTTLS two (the reply
 * and the TLS handshake). So a client's time against it counts its round trips, as against a mail
 * server that far away: the latency benchmark (bench/latency.bench.ts) and the warm-session tests.
 *
 * It offers PIPELINING, STARTTLS where `starttls(host)` says so (the kit's certificate), and
 * closes a session idle for `idleTimeoutMs(host)` with a 421 as Postfix does at `smtpd_timeout`.
 * It records each connection's commands, so a test sees what reached the wire and on which
 * connection.
 */
import { startSmtpCore, type SmtpConnection, type SmtpCore, type SmtpHandler } from './smtp-core.js';

export interface LatencyMtaOptions {
  /** Loopback addresses to listen on, all on one port. */
  hosts: string[];
  /** One-way network delay in ms (a round trip is twice it). Default 20. */
  oneWayMs?: number;
  /** Whether `host` offers STARTTLS (default: none does). */
  starttls?: (host: string) => boolean;
  /** Idle time after which `host` closes a session with 421 (default: never). */
  idleTimeoutMs?: (host: string) => number;
  /** The reply line to `RCPT TO:<address>`. Default: "250 2.1.5 OK". */
  rcpt?: (address: string) => string;
  /** Whether `host` answers RSET with 421 and closes (a server shutting down under a warm session). */
  closeAtRset?: (host: string) => boolean;
}

/** One connection as the server saw it. */
export interface LatencySession {
  host: string;
  commands: string[];
  /** Whether the server closed it (idle timeout, QUIT). */
  closedByServer: boolean;
}

export interface LatencyMta {
  readonly port: number;
  readonly core: SmtpCore;
  /** Every connection so far, in the order they came. */
  readonly sessions: LatencySession[];
  /** Connections to `host` so far. */
  connectionsTo(host: string): number;
  close(): Promise<void>;
}

const CRLF = '\r\n';

export async function startLatencyMta(options: LatencyMtaOptions): Promise<LatencyMta> {
  const roundTrip = 2 * (options.oneWayMs ?? 20);
  const offersTls = options.starttls ?? (() => false);
  const idleOf = options.idleTimeoutMs ?? (() => Infinity);
  const rcptReply = options.rcpt ?? (() => '250 2.1.5 OK');
  const sessions: LatencySession[] = [];

  function onConnection(conn: SmtpConnection): SmtpHandler {
    conn.enter();
    const host = conn.host;
    const session: LatencySession = { host, commands: [], closedByServer: false };
    sessions.push(session);
    const idleMs = idleOf(host);
    let idle: NodeJS.Timeout | null = null;
    let closing = false;
    const armIdle = (afterMs: number): void => {
      if (idle !== null) clearTimeout(idle);
      if (idleMs === Infinity) return;
      idle = conn.after(afterMs + idleMs, () => {
        session.closedByServer = true;
        closing = true;
        conn.end(`421 4.4.2 latency-mta Error: timeout exceeded${CRLF}`);
      });
    };
    conn.send(`220 latency-mta ESMTP${CRLF}`, 2 * roundTrip);
    armIdle(2 * roundTrip);
    let inTransaction = false;

    return {
      end: () => conn.leave(),
      close: () => {
        if (idle !== null) clearTimeout(idle);
      },
      lines(lines) {
        if (closing) return;
        const replies: string[] = [];
        for (const line of lines) {
          session.commands.push(line);
          const verb = line.slice(0, 4).toUpperCase();
          if (line.toUpperCase() === 'STARTTLS') {
            // The reply and the TLS handshake: two round trips before the client can speak again.
            conn.stopReading();
            conn.after(2 * roundTrip, () => {
              conn.write(`220 2.0.0 Ready to start TLS${CRLF}`);
              conn.startTls();
            });
            // No idle close during the handshake: the EHLO after it arms it again.
            if (idle !== null) clearTimeout(idle);
            return;
          }
          switch (verb) {
            case 'EHLO':
              replies.push(
                [
                  '250-latency-mta',
                  '250-PIPELINING',
                  ...(offersTls(host) && !conn.secure ? ['250-STARTTLS'] : []),
                  '250-ENHANCEDSTATUSCODES',
                  '250 8BITMIME',
                ].join(CRLF),
              );
              break;
            case 'HELO':
              replies.push('250 latency-mta');
              break;
            case 'MAIL':
              replies.push(inTransaction ? '503 5.5.1 Error: nested MAIL command' : '250 2.1.0 Ok');
              inTransaction = true;
              break;
            case 'RCPT':
              replies.push(
                inTransaction
                  ? rcptReply(/<([^>]*)>/.exec(line)?.[1] ?? '')
                  : '503 5.5.1 Error: need MAIL command',
              );
              break;
            case 'RSET':
              inTransaction = false;
              if (options.closeAtRset?.(host) === true) {
                replies.push('421 4.3.2 latency-mta Service shutting down');
                closing = true;
                session.closedByServer = true;
              } else replies.push('250 2.0.0 Ok');
              break;
            case 'NOOP':
              replies.push('250 2.0.0 Ok');
              break;
            case 'QUIT':
              replies.push('221 2.0.0 Bye');
              closing = true;
              session.closedByServer = true;
              break;
            default:
              replies.push('502 5.5.2 Error: command not recognized');
          }
          if (closing) break;
        }
        if (closing) {
          conn.stopReading();
          if (idle !== null) clearTimeout(idle);
        } else armIdle(roundTrip);
        if (replies.length > 0) conn.send(replies.join(CRLF) + CRLF, roundTrip, closing);
      },
    };
  }

  const core = await startSmtpCore({ hosts: options.hosts, connection: onConnection });
  return {
    port: core.port,
    core,
    sessions,
    connectionsTo: (host) => sessions.filter((s) => s.host === host).length,
    close: () => core.close(),
  };
}
