/**
 * A fast scripted SMTP responder, a handler of the kit's raw SMTP server (test/kit/smtp-core.ts;
 * no DATA, no TLS): the fake MTA of the batch probing benchmark and of the batch engine's tests.
 * It answers pipelined commands (RFC 2920), adds a
 * fixed latency to every reply, enforces a per-transaction recipient limit (452 4.5.3) and
 * Postfix's hard error limit (421 after N rejected commands), and counts what a polite client
 * must be judged on: connections, concurrent sessions per host, RCPTs per TCP read, RSETs.
 *
 * Listens on several loopback addresses (127.0.0.x) sharing one port, like distinct MX hosts.
 * The benchmark runs it in a child process (bench/fake-mta-pipelining.ts), with the fake DNS
 * server alongside it.
 */
import { startSmtpCore, type SmtpConnection, type SmtpHandler } from './smtp-core.js';

export interface RcptContext {
  /** The IP address the client connected to. */
  host: string;
  /** RCPTs already answered in this transaction. */
  inTransaction: number;
}

export interface FakeMtaOptions {
  /** Loopback addresses to listen on, all on one port. */
  hosts: string[];
  /** 0: an ephemeral port picked on the first host. */
  port?: number;
  /** Delay before every reply (banner included), like a network round trip. */
  latencyMs?: number;
  /** Advertise PIPELINING in the EHLO reply (default true). */
  pipelining?: boolean;
  /** The reply line to `RCPT TO:<address>`, e.g. "250 2.1.5 OK". Default: accept. */
  rcpt?: (address: string, context: RcptContext) => string;
  /** The banner of a host, e.g. "421 4.3.2 busy" to refuse; null: never answer. Default 220. */
  banner?: (host: string) => string | null;
  /** The reply to MAIL FROM on a host (default "250 2.1.0 Ok"). */
  mail?: (host: string) => string;
  /** RCPTs accepted per transaction before "452 4.5.3 Too many recipients" (0: no limit). */
  maxRecipientsPerTransaction?: number;
  /** Rejected commands per session before "421 4.7.0 too many errors" and close (0: none). */
  hardErrorLimit?: number;
  /** Keep every session's command log in `stats().sessions` (tests only: it grows). */
  record?: boolean;
}

export interface FakeMtaStats {
  connections: number;
  connectionsByHost: Record<string, number>;
  /** Most sessions open at once, per host and overall. */
  peakConcurrentByHost: Record<string, number>;
  peakConcurrent: number;
  mailFroms: number;
  rcpts: number;
  rsets: number;
  /** TCP reads that carried at least one RCPT, and the most RCPTs one read carried. */
  rcptReads: number;
  maxRcptsPerRead: number;
  /** Most rejected commands (4xx/5xx RCPT replies) any one session received. */
  maxErrorsPerSession: number;
  /** Sessions closed with 421 for too many errors. */
  errorLimitDisconnects: number;
  /** Command logs, when `record` is on. */
  sessions: { host: string; commands: string[] }[];
}

export interface FakeMta {
  readonly port: number;
  stats(): FakeMtaStats;
  /** Most connections open at once on `hosts` together, as the server counts them (smtp-core's `peakConnected`). */
  peakConnectedAcross(hosts: readonly string[]): number;
  resetStats(): void;
  close(): Promise<void>;
}

const CRLF = '\r\n';

/** Starts the responder on every host of `options.hosts`. */
export async function startFakeMta(options: FakeMtaOptions): Promise<FakeMta> {
  const latencyMs = options.latencyMs ?? 0;
  const pipelining = options.pipelining ?? true;
  const rcptReply = options.rcpt ?? (() => '250 2.1.5 OK');
  const bannerOf = options.banner ?? (() => '220 fake-mta ESMTP');
  const maxPerTxn = options.maxRecipientsPerTransaction ?? 0;
  const mailReply = options.mail;
  const hardErrorLimit = options.hardErrorLimit ?? 0;
  let stats = emptyStats();

  const ehloReply = [
    '250-fake-mta',
    ...(pipelining ? ['250-PIPELINING'] : []),
    '250-8BITMIME',
    '250 ENHANCEDSTATUSCODES',
  ].join(CRLF);

  function onConnection(conn: SmtpConnection): SmtpHandler {
    const host = conn.host;
    // A session ends for the count when the client has left (its FIN), or at the close: the
    // client frees its slot only after that, so the server never counts more than it holds.
    conn.enter();
    const log: string[] = [];
    if (options.record === true) stats.sessions.push({ host, commands: log });
    const later = (text: string, close = false): void => conn.send(text + CRLF, latencyMs, close);

    let inTransaction = false;
    let rcptsInTransaction = 0;
    let errors = 0;
    let closing = false;

    const banner = bannerOf(host);
    const refused = banner !== null && !banner.startsWith('2');
    if (banner !== null) later(banner, refused);
    if (banner === null || refused) {
      conn.stopReading();
      return { end: () => conn.leave() };
    }

    return {
      end: () => conn.leave(),
      lines(lines) {
        const replies: string[] = [];
        let rcptsThisRead = 0;
        for (const line of lines) {
          if (closing) break;
          if (options.record === true) log.push(line);
          const verb = line.slice(0, 4).toUpperCase();
          switch (verb) {
            case 'EHLO':
              replies.push(ehloReply);
              break;
            case 'HELO':
              replies.push('250 fake-mta');
              break;
            case 'MAIL':
              stats.mailFroms += 1;
              if (inTransaction) replies.push('503 5.5.1 Error: nested MAIL command');
              else if (mailReply !== undefined && !mailReply(host).startsWith('2'))
                replies.push(mailReply(host));
              else {
                inTransaction = true;
                rcptsInTransaction = 0;
                replies.push('250 2.1.0 Ok');
              }
              break;
            case 'RCPT': {
              stats.rcpts += 1;
              rcptsThisRead += 1;
              let reply: string;
              if (!inTransaction) reply = '503 5.5.1 Error: need MAIL command';
              else if (maxPerTxn > 0 && rcptsInTransaction >= maxPerTxn)
                reply = '452 4.5.3 Error: too many recipients';
              else {
                const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
                reply = rcptReply(address, { host, inTransaction: rcptsInTransaction });
                if (reply.startsWith('2')) rcptsInTransaction += 1;
              }
              if (!reply.startsWith('2')) {
                errors += 1;
                stats.maxErrorsPerSession = Math.max(stats.maxErrorsPerSession, errors);
                if (hardErrorLimit > 0 && errors > hardErrorLimit) {
                  stats.errorLimitDisconnects += 1;
                  replies.push('421 4.7.0 fake-mta Error: too many errors');
                  closing = true;
                  break;
                }
              }
              replies.push(reply);
              break;
            }
            case 'RSET':
              stats.rsets += 1;
              inTransaction = false;
              rcptsInTransaction = 0;
              replies.push('250 2.0.0 Ok');
              break;
            case 'NOOP':
              replies.push('250 2.0.0 Ok');
              break;
            case 'QUIT':
              replies.push('221 2.0.0 Bye');
              closing = true;
              break;
            default:
              replies.push('502 5.5.2 Error: command not recognized');
          }
        }
        if (closing) conn.stopReading();
        if (rcptsThisRead > 0) {
          stats.rcptReads += 1;
          stats.maxRcptsPerRead = Math.max(stats.maxRcptsPerRead, rcptsThisRead);
        }
        if (replies.length > 0) later(replies.join(CRLF), closing);
      },
    };
  }

  const core = await startSmtpCore({
    hosts: options.hosts,
    ...(options.port === undefined ? {} : { port: options.port }),
    connection: onConnection,
  });

  return {
    port: core.port,
    stats: () => {
      const tally = core.tally();
      return {
        ...structuredClone(stats),
        connections: tally.connections,
        connectionsByHost: tally.connectionsByHost,
        peakConcurrentByHost: tally.peakConcurrentByHost,
        peakConcurrent: tally.peakConcurrent,
      };
    },
    peakConnectedAcross: (hosts) => core.peakConnectedAcross(hosts),
    resetStats: () => {
      stats = emptyStats();
      core.resetTally();
    },
    close: () => core.close(),
  };
}

function emptyStats(): FakeMtaStats {
  return {
    connections: 0,
    connectionsByHost: {},
    peakConcurrentByHost: {},
    peakConcurrent: 0,
    mailFroms: 0,
    rcpts: 0,
    rsets: 0,
    rcptReads: 0,
    maxRcptsPerRead: 0,
    maxErrorsPerSession: 0,
    errorLimitDisconnects: 0,
    sessions: [],
  };
}
