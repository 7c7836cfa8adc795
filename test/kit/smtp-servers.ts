/**
 * In-process mail hosts for tests: each on its own loopback address (127.0.0.2, 127.0.0.3...)
 * and all on one port, the engine's `smtp.port`, exactly as MX hosts of the internet all
 * listen on 25. Behaviours are scripted per host; every command line that reaches a host is
 * recorded so that tests can assert what went over the wire.
 *
 * Scripted MTAs run on `smtp-server`; the hosts that misbehave below the SMTP level (silent,
 * dropping the line, refusing the connection) are handlers of the kit's raw SMTP server
 * (test/kit/smtp-core.ts) or no server at all.
 */
import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { kitCertificate, listen, startSmtpCore } from './smtp-core.js';

/** A reply the script gives: code and text, the text starting with its enhanced code if any. */
export interface ScriptedReply {
  code: number;
  message: string;
}

export interface MtaScript {
  kind: 'mta';
  /** Local parts that exist (case-insensitive). Others get `unknownReply`. */
  mailboxes?: string[];
  /** Accepts every recipient. */
  catchAll?: boolean;
  /** Replies for given local parts (lower-case), whatever `mailboxes` says. */
  rcpt?: Record<string, ScriptedReply>;
  /** Reply for recipients that are neither mailboxes nor in `rcpt`. Default 550 5.1.1. */
  unknownReply?: ScriptedReply;
  /** Refuses the session with this reply instead of the 220 banner (421, 554...). */
  bannerReply?: ScriptedReply;
  /** Refuses MAIL FROM with this reply. */
  mailReply?: ScriptedReply;
  /** Offer STARTTLS (`offer`) or refuse MAIL FROM with 530 5.7.0 until TLS (`require`). */
  tls?: 'none' | 'offer' | 'require';
  /** Advertise PIPELINING (default true). */
  pipelining?: boolean;
  /** Advertise SMTPUTF8 (default true). */
  smtpUtf8?: boolean;
  /** Delay before the banner and before the replies to MAIL FROM and RCPT TO. */
  delayMs?: number;
  /** Never answers RCPT for recipients that are not mailboxes (a tarpit). */
  stallUnknown?: boolean;
}

/**
 * A hand-written server for what smtp-server will not do: answers 250 to every command and
 * 220 to STARTTLS, but can drop the connection at a command, refuse EHLO (502) so that the
 * client must fall back to HELO, or answer STARTTLS with bytes that are not TLS.
 */
export interface RawScript {
  kind: 'raw';
  dropAt?: 'EHLO' | 'MAIL' | 'RCPT';
  refuseEhlo?: boolean;
  brokenStarttls?: boolean;
}

export type HostScript =
  | MtaScript
  /** Accepts TCP and never says a word. */
  | { kind: 'silent' }
  | RawScript
  /** Nothing listens: connections are refused (RST). */
  | { kind: 'refuse' };

export interface KitHost {
  readonly ip: string;
  readonly script: HostScript;
  /** Every command line received, across connections, in order. */
  readonly commands: string[];
  /** How many TCP connections were accepted. */
  connections: number;
  /** Whether any session on this host ran over TLS. */
  tlsSessions: number;
}

export interface SmtpKit {
  /** The one port all hosts listen on: the engine's `smtp.port`. */
  readonly port: number;
  /** Hosts by the name given to `startSmtpServers`. */
  readonly hosts: Record<string, KitHost>;
  /** All commands received by all hosts. */
  allCommands(): string[];
  /** Forgets recorded commands and connection counts (between tests sharing a kit). */
  resetRecords(): void;
  close(): Promise<void>;
}

/** Replies used by the scripts of the verdict tests. */
export const REPLIES = {
  userUnknown: { code: 550, message: '5.1.1 <{rcpt}> User unknown' },
  greylisted: { code: 450, message: '4.7.1 Greylisted, please try again later' },
  mailboxFull: { code: 452, message: '4.2.2 Mailbox full' },
  mailboxFullPermanent: { code: 552, message: '5.2.2 Mailbox full, quota exceeded' },
  disabled: { code: 550, message: '5.2.1 Mailbox disabled, not accepting messages' },
  tooManyRecipients: { code: 452, message: '4.5.3 Too many recipients' },
  spamhaus: {
    code: 554,
    message: '5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org',
  },
  bannerBusy: { code: 421, message: 'mx busy, try again later' },
  bannerRefused: { code: 554, message: 'No SMTP service here for you' },
  tlsRequired: { code: 530, message: '5.7.0 Must issue a STARTTLS command first' },
} satisfies Record<string, ScriptedReply>;

function replyError(reply: ScriptedReply, rcpt = ''): Error {
  return Object.assign(new Error(reply.message.replace('{rcpt}', rcpt)), { responseCode: reply.code });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts one host per entry of `scripts` on 127.0.0.2, 127.0.0.3... (in the entries' order),
 * all on one free port. Retries with another port when one address has it taken.
 */
export async function startSmtpServers(scripts: Record<string, HostScript>): Promise<SmtpKit> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await tryStart(scripts);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 10) throw error;
    }
  }
}

interface Running {
  close(): Promise<void>;
}

async function tryStart(scripts: Record<string, HostScript>): Promise<SmtpKit> {
  const hosts: Record<string, KitHost> = {};
  const running: Running[] = [];
  let port = 0;
  let index = 2;
  try {
    for (const [name, script] of Object.entries(scripts)) {
      const host: KitHost = {
        ip: `127.0.0.${index++}`,
        script,
        commands: [],
        connections: 0,
        tlsSessions: 0,
      };
      hosts[name] = host;
      if (script.kind === 'refuse') continue;
      const started =
        script.kind === 'mta' ? await startMta(host, script, port) : await startRaw(host, script, port);
      running.push(started.server);
      port = started.port;
    }
  } catch (error) {
    await Promise.all(running.map((server) => server.close()));
    throw error;
  }
  if (port === 0) {
    // Every host refuses: still hand out a port on which nothing listens on these addresses.
    const probe = await listen(net.createServer(), '127.0.0.2', 0);
    port = probe.port;
    await probe.close();
  }
  return {
    port,
    hosts,
    allCommands: () => Object.values(hosts).flatMap((host) => host.commands),
    resetRecords: () => {
      for (const host of Object.values(hosts)) {
        host.commands.length = 0;
        host.connections = 0;
        host.tlsSessions = 0;
      }
    },
    close: async () => {
      await Promise.all(running.map((server) => server.close()));
    },
  };
}

async function startMta(
  host: KitHost,
  script: MtaScript,
  port: number,
): Promise<{ server: Running; port: number }> {
  const tlsMode = script.tls ?? 'none';
  const mailboxes = new Set((script.mailboxes ?? []).map((m) => m.toLowerCase()));
  const delay = script.delayMs ?? 0;
  const server = new SMTPServer({
    name: `mx.${host.ip}.smtp-kit.test`,
    disableReverseLookup: true,
    authOptional: true,
    hideSTARTTLS: tlsMode === 'none',
    hidePIPELINING: script.pipelining === false,
    hideSMTPUTF8: script.smtpUtf8 === false,
    ...(tlsMode === 'none' ? {} : kitCertificate()),
    // smtp-server closes sessions with a grace period; tests want them gone at once.
    closeTimeout: 50,
    logger: {
      // smtp-server logs every command line it parsed as debug({tnx: 'command'}, 'C:', line).
      debug: (entry: { tnx?: string }, _format: string, line: string) => {
        if (entry.tnx === 'command') host.commands.push(line);
      },
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      trace: () => undefined,
      fatal: () => undefined,
    } as never,
    onConnect(_session: SMTPServerSession, callback: (error?: Error | null) => void) {
      host.connections++;
      const answer = (): void => callback(script.bannerReply ? replyError(script.bannerReply) : null);
      if (delay > 0) void sleep(delay).then(answer);
      else answer();
    },
    onSecure(_socket: unknown, _session: SMTPServerSession, callback: (error?: Error | null) => void) {
      host.tlsSessions++;
      callback();
    },
    onMailFrom(
      _address: SMTPServerAddress,
      session: SMTPServerSession,
      callback: (error?: Error | null) => void,
    ) {
      const answer = (): void => {
        if (script.mailReply) return callback(replyError(script.mailReply));
        if (tlsMode === 'require' && !session.secure) return callback(replyError(REPLIES.tlsRequired));
        callback();
      };
      if (delay > 0) void sleep(delay).then(answer);
      else answer();
    },
    onRcptTo(
      address: SMTPServerAddress,
      _session: SMTPServerSession,
      callback: (error?: Error | null) => void,
    ) {
      const answer = (): void => {
        const local = address.address.slice(0, address.address.lastIndexOf('@')).toLowerCase();
        const scripted = script.rcpt?.[local];
        if (scripted) return callback(replyError(scripted, address.address));
        if (script.catchAll || mailboxes.has(local)) return callback();
        if (script.stallUnknown) return;
        callback(replyError(script.unknownReply ?? REPLIES.userUnknown, address.address));
      };
      if (delay > 0) void sleep(delay).then(answer);
      else answer();
    },
    onData(
      stream: NodeJS.ReadableStream,
      _session: SMTPServerSession,
      callback: (error?: Error | null) => void,
    ) {
      // The engine never sends DATA; if it ever does, the recorded command shows it.
      stream.resume();
      stream.on('end', () =>
        callback(replyError({ code: 554, message: '5.7.1 the kit does not take mail' })),
      );
    },
  });
  server.on('error', () => undefined);
  const listened = await listen(server.server, host.ip, port);
  return {
    port: listened.port,
    server: {
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    },
  };
}

async function startRaw(
  host: KitHost,
  script: Extract<HostScript, { kind: 'silent' | 'raw' }>,
  port: number,
): Promise<{ server: Running; port: number }> {
  const core = await startSmtpCore({
    hosts: [host.ip],
    port,
    encoding: 'utf8',
    connection(conn) {
      host.connections++;
      if (script.kind === 'silent') {
        // Read and record, never answer.
        return { lines: (lines) => host.commands.push(...lines.filter((l) => l !== '')) };
      }
      conn.write(`220 mx.${host.ip}.smtp-kit.test ESMTP\r\n`);
      return {
        lines(lines) {
          for (const line of lines) {
            host.commands.push(line);
            const verb = line.slice(0, 4).toUpperCase();
            if (verb === script.dropAt) {
              conn.socket.destroy();
              return;
            }
            if (verb === 'EHLO') {
              if (script.refuseEhlo) conn.write('502 5.5.1 EHLO not implemented\r\n');
              else
                conn.write(
                  `250-mx.${host.ip}.smtp-kit.test\r\n250-8BITMIME\r\n${script.brokenStarttls ? '250-STARTTLS\r\n' : ''}250 ENHANCEDSTATUSCODES\r\n`,
                );
            } else if (verb === 'STAR' && script.brokenStarttls) {
              conn.write('220 2.0.0 go ahead\r\n');
              // The client's ClientHello: answer with bytes that are no TLS record.
              conn.takeNextChunk(() => conn.write('this is not a TLS record at all\r\n'));
            } else if (verb === 'QUIT') {
              conn.end('221 2.0.0 bye\r\n');
            } else {
              conn.write('250 2.0.0 OK\r\n');
            }
          }
        },
      };
    },
  });
  return { port: core.port, server: { close: () => core.close() } };
}
