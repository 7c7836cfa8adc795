/**
 * A mail host that is slow to a prober the way Postfix is: a handler of the kit's raw SMTP
 * server (test/kit/smtp-core.ts; PIPELINING, no DATA, no TLS) for the batch benchmark and for tests, applying the rules of
 * Postfix's smtpd that decide how fast a client may verify addresses (postconf(5)), each one a
 * switch (0 turns it off):
 *
 * - `in_flow_delay` (1 s): smtpd opens the queue file (connects to cleanup) at the first accepted
 *   RCPT of a transaction (`smtpd_delay_open_until_valid_rcpt = yes`), and cleanup takes one
 *   in-flow token first or pauses `in_flow_delay` when there is none. The queue manager hands out
 *   tokens as it takes mail from the queue; a prober's transactions never become mail, so once
 *   the tokens there were are spent (`inFlowTokens`, 0 by default: the steady state), every
 *   transaction pays the pause. One pool of tokens per host (each host is one Postfix).
 * - `smtpd_soft_error_limit` (10) / `smtpd_error_sleep_time` (1 s): once a session has made that
 *   many errors, every reply is held that long (smtpd_chat_reply), QUIT's 221 included.
 * - `smtpd_hard_error_limit` (20): once a session has made that many errors, smtpd answers
 *   "421 4.7.0 <host> Error: too many errors" before reading another command, and closes.
 * - `smtpd_client_connection_count_limit` (50): a session that would be one more than that
 *   from one client address to one host gets "421 4.7.0 <host> Error: too many connections from
 *   <ip>" instead of the banner, and is closed.
 * - `smtpd_recipient_limit` (1000): RCPTs accepted per transaction before "452 4.5.3".
 *
 * An error is any command smtpd refuses: a refused RCPT (550 5.1.1 unknown user, a 4xx), a
 * command out of sequence, an unknown command. Replies are computed in command order, as smtpd
 * does: each waits for the one before it, the pauses add up, and the replies to the commands of
 * one read leave in one write at the end (smtpd flushes its output when its input runs dry).
 * `latencyMs` is added to every write, the banner included, like a network round trip.
 *
 * Sessions are counted per host and per client address, with the most open at once for each
 * (host, client) pair, so that a benchmark or test can check that a client kept every limit.
 */
import { startSmtpCore, type SmtpConnection, type SmtpHandler } from './smtp-core.js';

/** Postfix's defaults for the modelled rules (postconf(5)). */
export const POSTFIX_DEFAULTS = {
  inFlowDelayMs: 1_000,
  inFlowTokens: 0,
  softErrorLimit: 10,
  errorSleepMs: 1_000,
  hardErrorLimit: 20,
  clientConnectionLimit: 50,
  recipientLimit: 1_000,
} as const;

export type PostfixRules = { -readonly [K in keyof typeof POSTFIX_DEFAULTS]: number };

export interface PostfixLikeOptions extends Partial<PostfixRules> {
  /** Loopback addresses to listen on, all on one port: one Postfix per address. */
  hosts: string[];
  /** 0: an ephemeral port picked on the first host. */
  port?: number;
  /** Added to every write, banner included. */
  latencyMs?: number;
  /** `myhostname`, in the banner and the 421 replies. */
  hostname?: string;
  /** The reply to `RCPT TO:<address>`, e.g. "550 5.1.1 <a@b>: ... User unknown". Default: accept. */
  rcpt?: (address: string, context: { host: string; client: string }) => string;
  /** Keep every session's exchanges in `stats().records` (tests: it grows). */
  record?: boolean;
}

export interface Exchange {
  /** The command line; '' for the banner, and for the 421 smtpd sends on its own. */
  command: string;
  reply: string;
  /** What the modelled rules held this reply back (in_flow_delay, error sleep), in ms. */
  heldMs: number;
}

export interface PostfixLikeStats {
  /** TCP connections accepted, those refused at the connection limit included. */
  connections: number;
  /** Sessions greeted with 220, per host and per client address. */
  sessionsByHost: Record<string, number>;
  sessionsByClient: Record<string, number>;
  peakConcurrentByHost: Record<string, number>;
  /** Most sessions open at once from one client to one host: host -> client -> peak. */
  peakConcurrentByClient: Record<string, Record<string, number>>;
  peakConcurrent: number;
  /** MAIL FROM accepted. */
  transactions: number;
  rcpts: number;
  acceptedRcpts: number;
  rsets: number;
  /** Commands refused (what smtpd's error_count counts), and the most in one session. */
  errors: number;
  maxErrorsPerSession: number;
  /** Replies held by in_flow_delay, and by the error sleep. */
  inFlowPauses: number;
  errorSleeps: number;
  /** Sessions closed at the hard error limit, and connections refused at the connection limit. */
  errorLimitDisconnects: number;
  connectionLimitRefusals: number;
  /**
   * Where the time of the sessions went, for a benchmark to tell the model's delays from the
   * machine's: the sessions that ended and their total duration; the client's turnarounds (from
   * a write of this server to the next command arriving) and their total; the writes and how
   * late their timers fired in total (an overloaded machine fires them late).
   */
  endedSessions: number;
  sessionMs: number;
  turnarounds: number;
  turnaroundMs: number;
  writes: number;
  lateMs: number;
  records: { host: string; client: string; exchanges: Exchange[] }[];
}

export interface PostfixLikeMta {
  readonly port: number;
  readonly rules: Readonly<PostfixRules>;
  stats(): PostfixLikeStats;
  resetStats(): void;
  close(): Promise<void>;
}

const CRLF = '\r\n';

/** Starts one Postfix-like host on every address of `options.hosts`. */
export async function startPostfixLikeMta(options: PostfixLikeOptions): Promise<PostfixLikeMta> {
  const rules: PostfixRules = { ...POSTFIX_DEFAULTS };
  for (const key of Object.keys(POSTFIX_DEFAULTS) as (keyof PostfixRules)[]) {
    const value = options[key];
    if (value !== undefined) rules[key] = value;
  }
  const latencyMs = options.latencyMs ?? 0;
  const hostname = options.hostname ?? 'mx.postfix-like.test';
  const rcptReply = options.rcpt ?? (() => '250 2.1.5 Ok');
  const tokens = new Map<string, number>();
  let stats = emptyStats();

  const ehloReply = [
    `250-${hostname}`,
    '250-PIPELINING',
    '250-SIZE 10240000',
    '250-ENHANCEDSTATUSCODES',
    '250-8BITMIME',
    '250-DSN',
    '250 SMTPUTF8',
  ].join(CRLF);

  /** cleanup's mail_flow_get(1): true when a token was there, false when it must pause. */
  function takeInFlowToken(host: string): boolean {
    const left = tokens.get(host) ?? rules.inFlowTokens;
    if (left <= 0) return false;
    tokens.set(host, left - 1);
    return true;
  }

  function onConnection(conn: SmtpConnection): SmtpHandler {
    const { host, client, socket } = conn;

    // Replies leave in order: one queue per session, one timer at a time.
    const outbox: { at: number; text: string; close: boolean }[] = [];
    let timer: NodeJS.Timeout | null = null;
    let busyUntil = 0;
    let closing = false;
    let clientEnded = false;
    let finished = false;
    /** Whether this connection counts as a session (not refused at the connection limit). */
    let counted = false;
    let left = false;
    const openedAt = performance.now();
    /** When this server last wrote, while no command has come since. */
    let wroteAt = 0;
    // The session is over for the count once this side has closed (after its last reply) or
    // the connection is gone; the client frees its own slot only after that.
    const leave = (): void => {
      if (left || !counted) return;
      left = true;
      stats.endedSessions += 1;
      stats.sessionMs += performance.now() - openedAt;
      conn.leave();
    };

    const finish = (text: string): void => {
      if (finished) return;
      finished = true;
      conn.end(text);
      leave();
    };
    const flush = (): void => {
      timer = null;
      if (socket.destroyed) return;
      const now = performance.now();
      if (outbox.length > 0) {
        stats.writes += 1;
        stats.lateMs += Math.max(0, now - outbox[0]!.at);
      }
      wroteAt = now;
      let text = '';
      let close = false;
      while (outbox.length > 0 && outbox[0]!.at <= now + 0.5) {
        const next = outbox.shift()!;
        text += next.text;
        close ||= next.close;
      }
      if (close || (clientEnded && outbox.length === 0)) finish(text);
      else {
        if (text !== '') conn.write(text);
        arm();
      }
    };
    function arm(): void {
      if (timer !== null || outbox.length === 0) return;
      timer = conn.after(Math.max(0, Math.ceil(outbox[0]!.at - performance.now())), flush);
    }
    /** Queues `text` behind the replies before it, held `heldMs` more, then the network's latency. */
    const emit = (text: string, heldMs: number, close: boolean): void => {
      busyUntil = Math.max(performance.now(), busyUntil) + heldMs;
      outbox.push({ at: busyUntil + latencyMs, text, close });
      arm();
    };

    // anvil counts sessions per client address for each smtpd service, that is per host here.
    if (rules.clientConnectionLimit > 0 && core.openFrom(host, client) + 1 > rules.clientConnectionLimit) {
      stats.connectionLimitRefusals += 1;
      conn.stopReading();
      emit(`421 4.7.0 ${hostname} Error: too many connections from ${client}${CRLF}`, 0, true);
      return {};
    }
    counted = true;
    conn.enter();

    const exchanges: Exchange[] = [];
    if (options.record === true) stats.records.push({ host, client, exchanges });
    const banner = `220 ${hostname} ESMTP Postfix`;
    exchanges.push({ command: '', reply: banner, heldMs: 0 });
    emit(banner + CRLF, 0, false);

    let errors = 0;
    let inTransaction = false;
    /** Whether this transaction's queue file is open (its first RCPT was accepted). */
    let queueFileOpen = false;
    let acceptedInTransaction = 0;

    /** One command: its reply, whether smtpd counts it as an error, and a pause before it. */
    const answer = (line: string): { reply: string; error: boolean; pauseMs: number; close: boolean } => {
      const verb = line.slice(0, 4).toUpperCase();
      const ok = (reply: string, close = false) => ({ reply, error: false, pauseMs: 0, close });
      const refuse = (reply: string) => ({ reply, error: true, pauseMs: 0, close: false });
      if (line.trim() === '') return refuse('500 5.5.2 Error: bad syntax');
      switch (verb) {
        case 'EHLO':
          return ok(ehloReply);
        case 'HELO':
          return ok(`250 ${hostname}`);
        case 'MAIL':
          if (inTransaction) return refuse('503 5.5.1 Error: nested MAIL command');
          inTransaction = true;
          queueFileOpen = false;
          acceptedInTransaction = 0;
          stats.transactions += 1;
          return ok('250 2.1.0 Ok');
        case 'RCPT': {
          stats.rcpts += 1;
          if (!inTransaction) return refuse('503 5.5.1 Error: need MAIL command');
          if (acceptedInTransaction >= rules.recipientLimit)
            return refuse('452 4.5.3 Error: too many recipients');
          const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
          const reply = rcptReply(address, { host, client });
          if (!reply.startsWith('2')) return refuse(reply);
          stats.acceptedRcpts += 1;
          acceptedInTransaction += 1;
          let pauseMs = 0;
          if (!queueFileOpen) {
            queueFileOpen = true;
            if (rules.inFlowDelayMs > 0 && !takeInFlowToken(host)) {
              pauseMs = rules.inFlowDelayMs;
              stats.inFlowPauses += 1;
            }
          }
          return { reply, error: false, pauseMs, close: false };
        }
        case 'RSET':
          stats.rsets += 1;
          inTransaction = false;
          queueFileOpen = false;
          return ok('250 2.0.0 Ok');
        case 'NOOP':
          return ok('250 2.0.0 Ok');
        case 'QUIT':
          return ok('221 2.0.0 Bye', true);
        default:
          // DATA included: a prober never sends it.
          return refuse('502 5.5.2 Error: command not recognized');
      }
    };

    /** smtpd_chat_reply's sleep: once the session has made the soft limit's errors, every reply waits. */
    const errorSleep = (): number => {
      if (rules.softErrorLimit <= 0 || rules.errorSleepMs <= 0 || errors < rules.softErrorLimit) return 0;
      stats.errorSleeps += 1;
      return rules.errorSleepMs;
    };

    return {
      lines(lines) {
        if (wroteAt > 0) {
          stats.turnarounds += 1;
          stats.turnaroundMs += performance.now() - wroteAt;
          wroteAt = 0;
        }
        const replies: string[] = [];
        let heldMs = 0;
        for (const line of lines) {
          if (closing) break;
          const outcome = answer(line);
          const held = outcome.pauseMs + errorSleep();
          heldMs += held;
          replies.push(outcome.reply);
          exchanges.push({ command: line, reply: outcome.reply, heldMs: held });
          if (outcome.error) {
            errors += 1;
            stats.errors += 1;
            stats.maxErrorsPerSession = Math.max(stats.maxErrorsPerSession, errors);
          }
          closing = outcome.close;
          if (!closing && rules.hardErrorLimit > 0 && errors >= rules.hardErrorLimit) {
            // smtpd checks the limit before it reads the next command: what follows is never answered.
            const reply = `421 4.7.0 ${hostname} Error: too many errors`;
            const sleep = errorSleep();
            heldMs += sleep;
            replies.push(reply);
            exchanges.push({ command: '', reply, heldMs: sleep });
            stats.errorLimitDisconnects += 1;
            closing = true;
          }
        }
        if (closing) conn.stopReading();
        if (replies.length > 0) emit(replies.join(CRLF) + CRLF, heldMs, closing);
      },
      end() {
        clientEnded = true;
        // Nothing left to answer: smtpd sees the end of input and closes too.
        if (!closing && outbox.length === 0) finish('');
      },
      close() {
        if (timer !== null) clearTimeout(timer);
        leave();
      },
    };
  }

  // Half-open: a client that sends QUIT and its FIN together still gets the 221, as late as the
  // rules hold it, and its session lasts until then.
  const core = await startSmtpCore({
    hosts: options.hosts,
    ...(options.port === undefined ? {} : { port: options.port }),
    allowHalfOpen: true,
    connection: onConnection,
  });

  return {
    port: core.port,
    rules: Object.freeze({ ...rules }),
    stats: () => {
      const tally = core.tally();
      return {
        ...structuredClone(stats),
        connections: tally.connections,
        sessionsByHost: tally.sessionsByHost,
        sessionsByClient: tally.sessionsByClient,
        peakConcurrentByHost: tally.peakConcurrentByHost,
        peakConcurrentByClient: tally.peakConcurrentByClient,
        peakConcurrent: tally.peakConcurrent,
      };
    },
    resetStats: () => {
      stats = emptyStats();
      core.resetTally();
      tokens.clear();
    },
    close: () => core.close(),
  };
}

function emptyStats(): PostfixLikeStats {
  return {
    connections: 0,
    sessionsByHost: {},
    sessionsByClient: {},
    peakConcurrentByHost: {},
    peakConcurrentByClient: {},
    peakConcurrent: 0,
    transactions: 0,
    rcpts: 0,
    acceptedRcpts: 0,
    rsets: 0,
    errors: 0,
    maxErrorsPerSession: 0,
    inFlowPauses: 0,
    errorSleeps: 0,
    errorLimitDisconnects: 0,
    connectionLimitRefusals: 0,
    endedSessions: 0,
    sessionMs: 0,
    turnarounds: 0,
    turnaroundMs: 0,
    writes: 0,
    lateMs: 0,
    records: [],
  };
}
