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
 * Sessions open at once are the core's `peakConnected`: counted on both sides' socket events, in
 * the one order the process sees them, from the moment the client created its socket until the
 * server let go of it (smtp-core.ts says how).
 */
import type { SmtpConnection, SmtpCore, SmtpHandler } from './smtp-core.js';
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
  let core: SmtpCore | null = null;

  const serve = (conn: SmtpConnection): SmtpHandler => {
    const ip = conn.host;
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
    /** Silent, closed or upgrading: the lines still to come are not answered. */
    let stopped = false;
    const behaviour = (stage: Stage): Behaviour => script.stages?.[stage] ?? 'ok';
    let hung = false;

    // Output goes out in order even when a reply is split: what follows waits for its second half.
    let output = Promise.resolve();
    const out = (send: () => void, pauseAfterMs = 0): void => {
      output = output.then(async () => {
        if (conn.socket.destroyed) return;
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
    const end = (text?: string): void => out(() => conn.end(text === undefined ? undefined : text + CRLF));
    const reset = (): void => out(() => conn.reset());

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
        if (!hung) conn.end();
      },
    };
  };

  for (const ip of Object.keys(scripts)) {
    records.set(ip, {
      ip,
      sessions: [],
      get peakConcurrent() {
        return core?.peakConnected(ip) ?? 0;
      },
    });
  }
  // Half-open allowed: the server decides whether it closes when the client has (a host silent at
  // QUIT does not, and the client must end the session at its deadline).
  const started = await startSmtpCore({
    hosts: Object.keys(scripts),
    allowHalfOpen: true,
    connection: serve,
  });
  core = started;
  return {
    port: started.port,
    host: (ip) => records.get(ip)!,
    close: () => started.close(),
  };
}
