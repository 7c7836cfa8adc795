/**
 * Mail hosts that misbehave at a chosen stage of the dialogue, for the liveness tests: each stage
 * (banner, EHLO, STARTTLS, MAIL, RCPT, RSET, QUIT) answers as its script says — normally, split
 * across two packets, 4xx, 5xx, 421, a close, a reset, silence or garbage. A host cycles through
 * its session scripts, one per connection, so that a test can make a host that fails every
 * session, or one session in three.
 *
 * The kits of test/kit/smtp-servers.ts script replies, not failures at every stage (smtp-server
 * cannot reset, stall or send garbage at a chosen command); this one configures the kit's raw
 * SMTP core (smtp-core.ts), like the kit's silent and raw hosts, and records what a polite client
 * is judged on: connections, sessions open at once, and whether each session got an answer about
 * a recipient.
 *
 * Sessions open at once are measured on both sides' socket events, in the one order the process
 * sees them (a counter, not a clock): a connection counts from the moment the client created its
 * socket (`net.client.socket` diagnostics channel), so that a connection made before another was
 * let go is never missed however late the server accepts it, until the server let go of it (it
 * closed or reset it, or read the client's FIN or reset; Postfix's anvil counts the same span,
 * until smtpd ends). Load cannot fake an overlap: a client that waits for the server's close
 * creates its next socket after it, in the same order.
 */
import diagnostics from 'node:diagnostics_channel';
import type net from 'node:net';

import type { SmtpConnection, SmtpHandler } from './smtp-core.js';
import { startSmtpCore } from './smtp-core.js';

export const STAGES = ['banner', 'ehlo', 'starttls', 'mail', 'rcpt', 'rset', 'quit'] as const;
export type Stage = (typeof STAGES)[number];

export const BEHAVIOURS = [
  'ok',
  'split',
  '4xx',
  '5xx',
  '421',
  'close',
  'reset',
  'silence',
  'garbage',
] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

export interface SessionScript {
  /** How each stage answers; a stage not named answers normally. */
  stages?: Partial<Record<Stage, Behaviour>>;
  /** Offer STARTTLS (the upgrade is real TLS with the kit's certificate). */
  offerTls?: boolean;
  /**
   * After the 220 to STARTTLS, send bytes that are no TLS record (the client's handshake fails):
   * `true` and the server closes with them, `'waits'` and it keeps the connection until the client
   * leaves (so the client's own close is what ends it).
   */
  brokenTls?: boolean | 'waits';
  /** Offer PIPELINING (default true). */
  pipelining?: boolean;
}

export interface SessionRecord {
  /** Which of the host's scripts ran it. */
  script: number;
  commands: string[];
  /** RCPTs that got an answer about the recipient (any reply but 421). */
  answeredRcpts: number;
  /** The session ended in a TLS handshake that the server broke on purpose. */
  brokenTls: boolean;
  /** Date.now() at accept. */
  acceptedAt: number;
}

export interface HostRecord {
  readonly ip: string;
  readonly sessions: SessionRecord[];
  /** Most connections open at once, as the file comment says (measured when read). */
  readonly peakConcurrent: number;
}

export interface ScriptedMtas {
  readonly port: number;
  host(ip: string): HostRecord;
  close(): Promise<void>;
}

const CRLF = '\r\n';

/** A recipient exists when its local part starts with "user". */
export const isMailbox = (address: string): boolean => address.startsWith('user');

const REPLIES: Record<Stage, Record<'ok' | '4xx' | '5xx' | '421', string>> = {
  banner: {
    ok: '220 mx.liveness.test ESMTP',
    '4xx': '450 4.3.2 not accepting connections now',
    '5xx': '554 5.7.1 no SMTP service for you',
    '421': '421 4.3.2 busy, try again later',
  },
  ehlo: {
    ok: '', // built per script
    '4xx': '451 4.3.0 try again later',
    '5xx': '550 5.7.1 your HELO name is refused',
    '421': '421 4.3.2 closing connection',
  },
  starttls: {
    ok: '220 2.0.0 ready to start TLS',
    '4xx': '454 4.7.0 TLS not available',
    '5xx': '501 5.5.4 syntax error',
    '421': '421 4.3.2 closing connection',
  },
  mail: {
    ok: '250 2.1.0 Ok',
    '4xx': '451 4.3.0 temporary failure, try later',
    '5xx': '550 5.7.1 sender refused by policy',
    '421': '421 4.3.2 closing connection',
  },
  rcpt: {
    ok: '', // per recipient
    '4xx': '450 4.7.1 greylisted, try again later',
    '5xx': '554 5.7.1 relay access denied',
    '421': '421 4.3.2 closing connection',
  },
  rset: {
    ok: '250 2.0.0 Ok',
    '4xx': '451 4.3.0 try again later',
    '5xx': '500 5.5.1 command unrecognized',
    '421': '421 4.3.2 closing connection',
  },
  quit: {
    ok: '221 2.0.0 bye',
    '4xx': '451 4.3.0 try again later',
    '5xx': '500 5.5.1 command unrecognized',
    '421': '421 4.3.2 closing connection',
  },
};

/** Starts one scripted host per entry (IP → its session scripts, cycled), all on one port. */
export async function startScriptedMtas(scripts: Record<string, SessionScript[]>): Promise<ScriptedMtas> {
  const records = new Map<string, HostRecord>();
  /** Per host: each accepted connection's client key, when it was accepted and let go of. */
  const spans = new Map<string, { key: string; acceptedAt: number; leftAt: number | null }[]>();
  /** Per client key (mail host address and client port): when each such socket was created. */
  const clientStarts = new Map<string, number[]>();
  let order = 0;
  const tick = (): number => ++order;
  let port = 0;
  const onClientSocket = (message: unknown): void => {
    const created = tick();
    const { socket } = message as { socket: net.Socket };
    socket.once('connect', () => {
      if (socket.remotePort !== port || socket.remoteAddress === undefined) return;
      const key = `${socket.remoteAddress}:${socket.localPort}`;
      clientStarts.set(key, [...(clientStarts.get(key) ?? []), created]);
    });
  };
  /**
   * The peak of open connections at host `ip`: a sweep over its spans in event order. A span
   * starts when its client socket was created: the latest one with its key created before the
   * accept (and after the key's previous accept). A client reset before it saw its 'connect'
   * event left no key: that span starts at the accept, as the server counts it.
   */
  const peakOf = (ip: string): number => {
    const previousAccept = new Map<string, number>();
    const events: [number, number][] = [];
    for (const span of spans.get(ip) ?? []) {
      const after = previousAccept.get(span.key) ?? 0;
      previousAccept.set(span.key, span.acceptedAt);
      const created = (clientStarts.get(span.key) ?? []).filter((t) => t > after && t < span.acceptedAt);
      events.push([created.at(-1) ?? span.acceptedAt, 1], [span.leftAt ?? Infinity, -1]);
    }
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let open = 0;
    let peak = 0;
    for (const [, change] of events) peak = Math.max(peak, (open += change));
    return peak;
  };

  const serve = (conn: SmtpConnection): SmtpHandler => {
    const ip = conn.host;
    const raw = conn.socket;
    const record = records.get(ip)!;
    const cycle = scripts[ip]!;
    const index = record.sessions.length % cycle.length;
    const script = cycle[index]!;
    const session: SessionRecord = {
      script: index,
      commands: [],
      answeredRcpts: 0,
      brokenTls: false,
      acceptedAt: Date.now(),
    };
    record.sessions.push(session);
    const span = {
      key: `${raw.localAddress}:${raw.remotePort}`,
      acceptedAt: tick(),
      leftAt: null as number | null,
    };
    spans.get(ip)!.push(span);
    /** The server lets go: it closes or resets, or reads the client's FIN or reset. */
    const leave = (): void => {
      span.leftAt ??= tick();
    };
    // A reset from the client is its leaving too ('close' comes a loop iteration later).
    raw.on('error', leave);

    /** Silent, closed or upgrading: the lines still to come are not answered. */
    let stopped = false;
    const behaviour = (stage: Stage): Behaviour => script.stages?.[stage] ?? 'ok';
    let hung = false;

    // Output goes out in order even when a reply is split: what follows waits for its second half.
    let output = Promise.resolve();
    const out = (send: () => void, pauseAfterMs = 0): void => {
      output = output.then(async () => {
        if (raw.destroyed) return;
        send();
        if (pauseAfterMs > 0) await new Promise<void>((resolve) => conn.after(pauseAfterMs, resolve));
      });
    };
    const write = (text: string, split: boolean): void => {
      if (!split) {
        out(() => conn.write(text + CRLF));
        return;
      }
      // A reply split across packets: the first half now, the rest a little later.
      const cut = Math.max(1, Math.floor(text.length / 2));
      out(() => conn.write(text.slice(0, cut)), 3);
      out(() => conn.write(text.slice(cut) + CRLF));
    };
    const end = (text?: string): void =>
      out(() => {
        leave();
        conn.end(text === undefined ? undefined : text + CRLF);
      });
    const reset = (): void =>
      out(() => {
        leave();
        raw.resetAndDestroy();
      });

    /** Answers `stage` with `okReply` or its misbehaviour; false when the session stops here. */
    const answer = (stage: Stage, okReply: string): boolean => {
      const how = behaviour(stage);
      switch (how) {
        case 'ok':
        case 'split':
          write(okReply, how === 'split');
          return true;
        case '4xx':
        case '5xx':
          write(REPLIES[stage][how], false);
          return true;
        case '421':
          end(REPLIES[stage]['421']);
          stopped = true;
          return false;
        case 'close':
          end();
          stopped = true;
          return false;
        case 'reset':
          reset();
          stopped = true;
          return false;
        case 'silence':
          stopped = true;
          return false;
        case 'garbage':
          write('this is not SMTP at all', false);
          return true;
      }
    };

    const ehloReply = (): string => {
      const lines = ['mx.liveness.test'];
      if (script.pipelining !== false) lines.push('PIPELINING');
      if (script.offerTls === true && !conn.secure) lines.push('STARTTLS');
      lines.push('ENHANCEDSTATUSCODES');
      return lines.map((line, i) => `250${i === lines.length - 1 ? ' ' : '-'}${line}`).join(CRLF);
    };

    const upgrade = (): void => {
      if (script.brokenTls === true || script.brokenTls === 'waits') {
        session.brokenTls = true;
        const closes = script.brokenTls === true;
        conn.stopReading();
        conn.takeNextChunk(() => {
          if (!closes) {
            conn.write('this is no TLS record' + CRLF);
            return;
          }
          leave();
          conn.end('this is no TLS record' + CRLF);
        });
        return;
      }
      conn.startTls();
      stopped = false;
    };

    const onLine = (line: string): void => {
      session.commands.push(line);
      const verb = line.slice(0, 4).toUpperCase();
      switch (verb) {
        case 'EHLO':
        case 'HELO':
          answer('ehlo', verb === 'EHLO' ? ehloReply() : '250 mx.liveness.test');
          return;
        case 'STAR': {
          const how = behaviour('starttls');
          if (how !== 'ok' && how !== 'split') {
            answer('starttls', '');
            return;
          }
          write(REPLIES.starttls.ok, how === 'split');
          // No line after STARTTLS is read in clear; the upgrade follows the whole 220.
          stopped = true;
          out(upgrade);
          return;
        }
        case 'MAIL':
          answer('mail', REPLIES.mail.ok);
          return;
        case 'RCPT': {
          const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
          const how = behaviour('rcpt');
          if (how === 'ok' || how === 'split' || how === '4xx' || how === '5xx') session.answeredRcpts += 1;
          answer('rcpt', isMailbox(address) ? '250 2.1.5 Ok' : `550 5.1.1 <${address}>: user unknown`);
          return;
        }
        case 'RSET':
          answer('rset', REPLIES.rset.ok);
          return;
        case 'QUIT': {
          const how = behaviour('quit');
          if (how === 'silence') {
            stopped = true;
            hung = true;
            return;
          }
          if (how === 'ok' || how === 'split' || how === '4xx' || how === '5xx' || how === 'garbage') {
            const reply =
              how === 'garbage' ? 'this is not SMTP at all' : REPLIES.quit[how === 'split' ? 'ok' : how];
            end(reply);
          } else answer('quit', '');
          stopped = true;
          return;
        }
        default:
          write('502 5.5.2 command not recognized', false);
      }
    };

    answer('banner', REPLIES.banner.ok);
    return {
      lines: (lines) => {
        for (const line of lines) {
          if (stopped) return;
          onLine(line);
        }
      },
      // The client's FIN: it has left; the server closes too, unless it hangs (silent at QUIT).
      end: () => {
        leave();
        if (!hung) conn.end();
      },
      close: leave,
    };
  };

  for (const ip of Object.keys(scripts)) {
    records.set(ip, {
      ip,
      sessions: [],
      get peakConcurrent() {
        return peakOf(ip);
      },
    });
    spans.set(ip, []);
  }
  diagnostics.subscribe('net.client.socket', onClientSocket);
  try {
    // Half-open allowed: the server decides whether it closes when the client has (a host silent
    // at QUIT does not, and the client must end the session at its deadline).
    const core = await startSmtpCore({ hosts: Object.keys(scripts), allowHalfOpen: true, connection: serve });
    port = core.port;
    return {
      port,
      host: (ip) => records.get(ip)!,
      close: async () => {
        diagnostics.unsubscribe('net.client.socket', onClientSocket);
        await core.close();
      },
    };
  } catch (error) {
    diagnostics.unsubscribe('net.client.socket', onClientSocket);
    throw error;
  }
}
