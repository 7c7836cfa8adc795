/**
 * One SMTP client connection: TCP (direct or through a SOCKS5 proxy), the banner, EHLO with
 * HELO fallback, opportunistic STARTTLS, single commands and pipelined groups, QUIT.
 *
 * Lean by design, because a probe is a handful of round trips and the engine runs thousands a
 * second: one timer per connection (re-armed when the deadline moves, never one per line),
 * replies matched to commands by a FIFO of waiters, and no per-line regular expressions.
 * Batch sessions build on the same class: `pipeline()` writes several commands in one packet
 * and returns one promise per reply, and `setDeadline()` moves the budget between addresses.
 */
import net from 'node:net';
import tls from 'node:tls';
import { SocksClient } from 'socks';
import type { EhloExtensions, SmtpReply } from './reply.js';
import { NO_EXTENSIONS, ReplyParser, SmtpProtocolError, parseEhloExtensions } from './reply.js';
import type { WireRecorder } from './transcript.js';
import type { TicketObservation } from './held-replies.js';
import { DEFAULT_HELD_REPLY_MARGIN_MS } from './held-replies.js';
import type { ConnectCandidate } from '../net/happy-eyeballs.js';
import { connectFirst, DEFAULT_CONNECTION_ATTEMPT_DELAY_MS, RaceFailure } from '../net/happy-eyeballs.js';

/**
 * Why a connection failed: `refused` / `unreachable` (TCP), `timeout` (the deadline passed),
 * `closed` (the peer hung up or reset), `protocol` (not SMTP), `tls` (handshake failed),
 * `proxy` (the SOCKS proxy failed), `destroyed` (closed by us).
 */
export type SmtpErrorKind =
  'refused' | 'unreachable' | 'timeout' | 'closed' | 'protocol' | 'tls' | 'proxy' | 'destroyed';

export class SmtpConnectionError extends Error {
  readonly kind: SmtpErrorKind;

  constructor(kind: SmtpErrorKind, message: string) {
    super(message);
    this.name = 'SmtpConnectionError';
    this.kind = kind;
  }
}

/** A command line that would put more than one command on the wire. */
export class SmtpCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmtpCommandError';
  }
}

/** A parsed socks5:// proxy URL. */
export interface SocksProxyOptions {
  host: string;
  port: number;
  userId?: string;
  password?: string;
}

/** Parses `socks5://[user:pass@]host:port` (also `socks://`); throws on anything else. */
export function parseProxyUrl(raw: string): SocksProxyOptions {
  const url = new URL(raw);
  if (url.protocol !== 'socks5:' && url.protocol !== 'socks:')
    throw new Error(`not a SOCKS5 proxy URL: ${raw}`);
  const port = Number(url.port || 1080);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const proxy: SocksProxyOptions = { host, port };
  if (url.username !== '') proxy.userId = decodeURIComponent(url.username);
  if (url.password !== '') proxy.password = decodeURIComponent(url.password);
  return proxy;
}

export interface OpenOptions {
  /** IP address of the mail host (never resolved again here). */
  address: string;
  port: number;
  /** Connect and banner must complete before this `performance.now()` instant. */
  deadlineAt: number;
  proxy?: SocksProxyOptions | null;
  /** Local address to connect from (an egress's source address); through a proxy it is unused. */
  localAddress?: string | null;
  /**
   * More addresses of the same host (the other family among them), raced after `address` by
   * Happy Eyeballs (../net/happy-eyeballs.ts); unused through a proxy. `address` and
   * `localAddress` of the connection are then those of the attempt that won.
   */
  alternates?: readonly ConnectCandidate[];
  /** Addresses of the family whose DNS answer came after the race began (RFC 8305 §3), raced when they come. */
  lateAlternates?: Promise<readonly ConnectCandidate[]>;
  /** Called when late alternates joined the race still running. */
  onLateJoin?: (added: readonly ConnectCandidate[]) => void;
  /** Happy Eyeballs' Connection Attempt Delay (default 250 ms). */
  attemptDelayMs?: number;
  /** Aborting destroys the connection at once (and fails what is pending with kind `destroyed`). */
  signal?: AbortSignal;
  /**
   * The latest `performance.now()` instant a closing connection waits for the server's own close
   * before it is destroyed; asked when closing starts. Absent: destroyed at once.
   */
  closeBy?: () => number;
  /**
   * Called once when the mail server no longer counts the connection (see `SmtpConnection`), or
   * at once when the connection never reached it: a per-host slot is held until then.
   */
  onClose?: () => void;
  /** The verification's transcript, from the banner on (see `SmtpConnection.recorder`). */
  recorder?: WireRecorder | null;
  /** How much later than the first TLS ticket a reply counts as held (held-replies.ts); default 20 ms. */
  heldReplyMarginMs?: number;
}

interface Waiter {
  resolve: (reply: SmtpReply) => void;
  reject: (error: Error) => void;
}

const noop = (): void => undefined;
const FORBIDDEN_IN_LINE = /[\r\n\0]/;

/** Throws unless `line` is exactly one command line (no CR, LF or NUL anywhere). */
export function assertCommandLine(line: string): void {
  if (FORBIDDEN_IN_LINE.test(line)) {
    throw new SmtpCommandError('an SMTP command line must not contain CR, LF or NUL');
  }
}

/**
 * After we closed a connection without seeing the server's close, how long the server is given to
 * read our FIN: twice the connect round trip, at least this.
 */
const MIN_LINGER_MS = 50;

/** Socket errors that mean the server itself has let go of the connection (it reset it). */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE']);

/**
 * A mail server counts a client's connection until it has closed its side (Postfix's anvil until
 * the smtpd process ends), not until the client stops caring. So a connection is released
 * (`onClose`) only once the server has let go: it closed or reset the connection; or, when we end
 * it, after our FIN and the server's close in answer, destroyed at `closeBy()` at the latest; or,
 * when our socket went away before the server was seen to close (a failed TLS handshake destroys
 * it), after a linger of two round trips for our FIN to reach the server.
 */
export class SmtpConnection {
  /** The server's greeting, read by `open`. */
  banner: SmtpReply = { code: 0, enhancedCode: null, lines: [], message: '' };
  /** What the last successful EHLO announced (nothing after HELO). */
  extensions: EhloExtensions = NO_EXTENSIONS;
  /** Whether the session runs over TLS (STARTTLS succeeded). */
  tls = false;
  readonly address: string;

  #socket: net.Socket;
  readonly #parser = new ReplyParser();
  #waiters: Waiter[] = [];
  /** Why the connection ended; the Error is only built when someone is there to receive it. */
  #failed: { kind: SmtpErrorKind; message: string } | null = null;
  #failure: SmtpConnectionError | null = null;
  #quitting = false;
  #timer: NodeJS.Timeout | null = null;
  #armedAt = Infinity;
  #signal: AbortSignal | undefined;
  #onClose: (() => void) | undefined;
  readonly #closeBy: (() => number) | undefined;
  /** The server closed or reset its side: nothing is left for it to count. */
  #peerLeft = false;
  /** Aborted: destroyed at once and released without waiting (the engine is closing). */
  #aborted = false;
  /** `performance.now()` when the TCP connection was made; null while it is not. */
  #connectedAt: number | null = null;
  readonly #startedAt = performance.now();
  #recorder: WireRecorder | null = null;
  /** The STARTTLS command's round trip (ms), null before STARTTLS. */
  #starttlsRtt: number | null = null;
  /** How long the last EHLO in clear text took to be answered (ms), null before one. */
  #clearEhloMs: number | null = null;
  /** `performance.now()` when the first TLS 1.3 session ticket came; null while none has. */
  #ticketAt: number | null = null;
  /** Whether the EHLO after TLS waited for the first ticket (held-replies.ts). */
  #waitedForTicket = false;
  /** Whether STARTTLS negotiated TLS 1.3 (whose tickets come after the handshake). */
  #tls13 = false;
  readonly #heldMarginMs: number;

  private constructor(socket: net.Socket, options: OpenOptions) {
    this.#socket = socket;
    this.recorder = options.recorder ?? null;
    this.address = options.address;
    this.#onClose = options.onClose;
    this.#closeBy = options.closeBy;
    this.#heldMarginMs = options.heldReplyMarginMs ?? DEFAULT_HELD_REPLY_MARGIN_MS;
    const signal = options.signal;
    if (socket.connecting) socket.once('connect', () => (this.#connectedAt = performance.now()));
    else this.#connectedAt = this.#startedAt;
    this.#attach(socket);
    if (signal !== undefined) {
      this.#signal = signal;
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** Connects and reads the banner; rejects with SmtpConnectionError when that fails. */
  static async open(options: OpenOptions): Promise<SmtpConnection> {
    let socket: net.Socket;
    try {
      if (options.proxy) {
        socket = await connectThroughProxy(options);
      } else if ((options.alternates?.length ?? 0) > 0 || options.lateAlternates !== undefined) {
        const won = await raceConnect(options);
        socket = won.socket;
        options = { ...options, address: won.candidate.address, localAddress: won.candidate.localAddress };
      } else {
        const localAddress = options.localAddress ?? undefined;
        socket = net.connect({ host: options.address, port: options.port, noDelay: true, localAddress });
      }
    } catch (error) {
      // Nothing reached the mail host: nothing for it to count.
      options.onClose?.();
      throw error;
    }
    const connection = new SmtpConnection(socket, options);
    if (options.signal?.aborted) connection.#onAbort();
    connection.setDeadline(options.deadlineAt);
    connection.banner = await connection.#expect();
    return connection;
  }

  /**
   * Why the connection ended, null while it is open. After `quit()`: `destroyed` when the server
   * closed it (or we did), `timeout` when it was still open at the deadline.
   */
  get ended(): SmtpErrorKind | null {
    return this.#failed?.kind ?? null;
  }

  /** Whether the connection can still carry commands. */
  get usable(): boolean {
    return this.#failed === null && !this.#quitting;
  }

  /**
   * Where the lines written and read go (transcript.ts), null: nowhere. It belongs to the
   * verification using the connection: set it when taking the connection, clear it when letting go.
   */
  get recorder(): WireRecorder | null {
    return this.#recorder;
  }

  set recorder(recorder: WireRecorder | null) {
    this.#recorder = recorder;
    this.#parser.onLine = recorder === null ? null : (line) => recorder.record('in', line);
  }

  /**
   * Moves the single deadline (a `performance.now()` instant; Infinity disarms it). When it
   * passes, every pending reply fails with kind `timeout` and the socket is destroyed.
   */
  setDeadline(at: number): void {
    if (at === this.#armedAt || this.#failed !== null) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = at === Infinity ? null : setTimeout(this.#onTimer, Math.max(0, at - performance.now()));
  }

  /** Sends one command and resolves with its reply. */
  command(line: string): Promise<SmtpReply> {
    assertCommandLine(line);
    if (!this.#write(`${line}\r\n`)) return this.#rejected();
    return this.#expect();
  }

  /**
   * Writes several commands at once (RFC 2920 PIPELINING) and returns one promise per reply,
   * in order. Each promise already has a handler attached, so the caller may stop awaiting
   * after a decisive reply without leaving an unhandled rejection behind.
   */
  pipeline(lines: readonly string[]): Promise<SmtpReply>[] {
    for (const line of lines) assertCommandLine(line);
    const written = this.#write(`${lines.join('\r\n')}\r\n`);
    return lines.map(() => {
      const promise = written ? this.#expect() : this.#rejected();
      promise.catch(noop);
      return promise;
    });
  }

  /**
   * EHLO, or HELO when the server refuses EHLO with a 5xx (RFC 5321 §4.1.4). Returns the reply
   * that counts; `extensions` is updated from a successful EHLO.
   */
  async ehlo(name: string): Promise<SmtpReply> {
    const sentAt = performance.now();
    const reply = await this.command(`EHLO ${name}`);
    if (!this.tls) this.#clearEhloMs = performance.now() - sentAt;
    if (reply.code >= 200 && reply.code < 300) {
      this.extensions = parseEhloExtensions(reply);
      return reply;
    }
    this.extensions = NO_EXTENSIONS;
    if (reply.code >= 500) return this.command(`HELO ${name}`);
    return reply;
  }

  /**
   * STARTTLS (RFC 3207). On 220 the socket is upgraded (certificates are not verified: the
   * probe wants privacy from passive observers, not authentication) and the caller must EHLO
   * again. Any other reply is returned and the session goes on in clear text. `awaitTicket`: over
   * TLS 1.3, resolve only once the server's first session ticket has come (held-replies.ts).
   */
  async starttls(servername: string | null, awaitTicket = false): Promise<SmtpReply> {
    const sentAt = performance.now();
    const reply = await this.command('STARTTLS');
    this.#starttlsRtt = performance.now() - sentAt;
    if (reply.code !== 220) return reply;
    // The 220 may have come with more text in the same packet, which failed the connection.
    if (this.#failed !== null) throw this.#error();
    const raw = this.#socket;
    this.#detach(raw);
    // The TLS socket reports the errors from now on; an unheard 'error' would crash the process.
    raw.on('error', noop);
    // Anything the server sent in clear after its 220 must not be read as a TLS-protected reply.
    this.#parser.reset();
    const options: tls.ConnectionOptions = { socket: raw, rejectUnauthorized: false };
    if (servername !== null && net.isIP(servername) === 0) options.servername = servername;
    const secure = tls.connect(options);
    // Listened to from the start: Node asks OpenSSL for the tickets only once someone listens.
    secure.once('session', () => (this.#ticketAt = performance.now()));
    this.#socket = secure;
    this.#attach(secure);
    await new Promise<SmtpReply>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject: (error) =>
          reject(
            error instanceof SmtpConnectionError && error.kind === 'closed'
              ? new SmtpConnectionError('tls', `TLS handshake failed: ${error.message}`)
              : error,
          ),
      };
      this.#waiters.push(waiter);
      secure.once('secureConnect', () => {
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
        resolve(reply);
      });
    });
    this.tls = true;
    const cipher = secure.getCipher();
    this.#recorder?.record('out', `[TLS handshake: ${secure.getProtocol() ?? 'TLS'}, ${cipher.name}]`);
    // TLS 1.2 tickets come within the handshake: there is nothing to wait for, nor to learn.
    this.#tls13 = secure.getProtocol() === 'TLSv1.3';
    if (awaitTicket && this.#tls13) await this.#awaitTicket(secure);
    return reply;
  }

  /**
   * Waits for the server's first TLS 1.3 session ticket (it comes a round trip after our Finished),
   * at most two STARTTLS round trips and the margin, or until the connection fails.
   */
  async #awaitTicket(secure: tls.TLSSocket): Promise<void> {
    if (this.#ticketAt !== null) return;
    this.#waitedForTicket = true;
    const startedAt = performance.now();
    const boundMs = 2 * (this.#starttlsRtt ?? 0) + this.#heldMarginMs;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        secure.off('session', onTicket);
        secure.off('close', done);
        resolve();
      };
      // 'session' is emitted inside the TLS socket's read: an EHLO written from there (as soon as
      // the promise resolves) was never answered (Node 20). The next turn of the loop is outside.
      const onTicket = (): void => void setImmediate(done);
      const timer = setTimeout(done, boundMs);
      secure.once('session', onTicket);
      secure.once('close', done);
    });
    const waited = Math.round(performance.now() - startedAt);
    this.#recorder?.record(
      'out',
      this.#ticketAt === null
        ? `[no TLS session ticket within ${waited} ms]`
        : `[TLS session ticket after ${waited} ms]`,
    );
  }

  /**
   * What the server's TLS 1.3 session tickets did to the first reply after the handshake, given
   * when that reply came (held-replies.ts): held when it came a good half round trip after the
   * first ticket, as a reply held for the tickets' acknowledgement does. A server already slow to
   * answer the EHLO in clear text (a look-up of the HELO name) is not taken for one that holds:
   * waiting would cost it a round trip.
   */
  ticketsAfterTls(replyAt: number): TicketObservation {
    if (this.#waitedForTicket) return this.#ticketAt === null ? 'no_tickets' : 'waited';
    const rtt = this.#starttlsRtt;
    if (!this.#tls13 || this.#ticketAt === null || rtt === null) return 'not_held';
    if (this.#clearEhloMs === null || this.#clearEhloMs > rtt + this.#heldMarginMs) return 'not_held';
    return replyAt - this.#ticketAt > rtt / 2 + this.#heldMarginMs ? 'held' : 'not_held';
  }

  /**
   * Sends QUIT and half-closes without waiting for the 221: the verdict is already known. The
   * socket goes away when the server closes, or at the deadline at the latest.
   */
  quit(): void {
    if (!this.usable) return;
    this.#quitting = true;
    this.#recorder?.record('out', 'QUIT');
    this.#socket.end('QUIT\r\n');
  }

  /**
   * Ends the connection: pending replies fail with kind `destroyed` at once; the socket is
   * half-closed and released as the class comment says.
   */
  destroy(): void {
    this.#fail('destroyed', 'connection closed by the client');
  }

  #attach(socket: net.Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('error', this.#onError);
    socket.on('close', this.#onSocketClose);
  }

  #detach(socket: net.Socket): void {
    socket.off('data', this.#onData);
    socket.off('end', this.#onEnd);
    socket.off('error', this.#onError);
    socket.off('close', this.#onSocketClose);
  }

  /** Writes unless the connection is failed or closing; says whether it wrote. */
  #write(text: string): boolean {
    if (!this.usable) return false;
    this.#socket.write(text);
    if (this.#recorder !== null)
      for (const line of text.split('\r\n')) if (line !== '') this.#recorder.record('out', line);
    return true;
  }

  #rejected(): Promise<SmtpReply> {
    return Promise.reject(
      this.#failed !== null ? this.#error() : new SmtpConnectionError('destroyed', 'connection is closing'),
    );
  }

  #expect(): Promise<SmtpReply> {
    if (this.#failed !== null) return Promise.reject(this.#error());
    return new Promise<SmtpReply>((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
    });
  }

  #onData = (chunk: string): void => {
    if (this.#quitting || this.#failed !== null) return;
    let replies: SmtpReply[];
    try {
      replies = this.#parser.push(chunk);
    } catch (error) {
      const message = error instanceof SmtpProtocolError ? error.message : String(error);
      this.#fail('protocol', message);
      return;
    }
    for (const reply of replies) {
      const waiter = this.#waiters.shift();
      if (waiter === undefined) {
        // A reply nobody asked for breaks the pairing of commands and replies (and after
        // STARTTLS would be an injection); an unsolicited 421 is a server going away.
        const kind = reply.code === 421 ? 'closed' : 'protocol';
        this.#fail(kind, `unexpected reply: ${reply.code} ${reply.message}`);
        return;
      }
      waiter.resolve(reply);
    }
  };

  /** The server's FIN: it has closed its side. */
  #onEnd = (): void => {
    this.#peerLeft = true;
  };

  #onError = (error: NodeJS.ErrnoException): void => {
    if (PEER_GONE.has(error.code ?? '')) this.#peerLeft = true;
    this.#fail(errorKind(error, this.tls || this.#socket instanceof tls.TLSSocket), error.message);
  };

  /** The socket is gone: released now, or after the linger when the server was not seen to close. */
  #onSocketClose = (): void => {
    this.#fail('closed', 'connection closed by the server');
    this.#clearTimer();
    if (this.#peerLeft || this.#aborted || this.#connectedAt === null) {
      this.#release();
      return;
    }
    const roundTrip = this.#connectedAt - this.#startedAt;
    const closeBy = this.#closeBy?.() ?? 0;
    const lingerMs = Math.min(
      Math.max(MIN_LINGER_MS, 2 * roundTrip),
      Math.max(0, closeBy - performance.now()),
    );
    // After the timer, one more turn of the event loop: our FIN is read by a server in this
    // process (the tests' in-process mail servers) before the slot's next connection is made.
    this.#timer = setTimeout(() => {
      this.#timer = null;
      setImmediate(() => this.#release());
    }, lingerMs);
  };

  #onAbort = (): void => {
    this.#aborted = true;
    this.#fail('destroyed', 'connection closed by the client');
    this.#socket.destroy();
    // Already closed and lingering: release now.
    if (this.#socket.destroyed && this.#timer !== null) this.#release();
  };

  #onTimer = (): void => {
    this.#timer = null;
    this.#armedAt = Infinity;
    this.#fail('timeout', 'no reply before the deadline');
  };

  #fail(kind: SmtpErrorKind, message: string): void {
    if (this.#failed !== null) return;
    // After QUIT the server hanging up is the expected end, not a failure to report.
    this.#failed =
      this.#quitting && kind === 'closed'
        ? { kind: 'destroyed', message: 'connection closed after QUIT' }
        : { kind, message };
    const waiters = this.#waiters;
    if (waiters.length > 0) {
      this.#waiters = [];
      const error = this.#error();
      for (const waiter of waiters) waiter.reject(error);
    }
    this.#clearTimer();
    this.#endSocket(kind === 'timeout' && this.#quitting);
  }

  /**
   * Half-closes the socket and waits for the server's close ('close' then releases), destroying
   * it at `closeBy()` at the latest; `now`: destroyed at once (QUIT already waited for the close).
   */
  #endSocket(now: boolean): void {
    const socket = this.#socket;
    if (socket.destroyed) return;
    const waitMs = now || this.#aborted ? 0 : (this.#closeBy?.() ?? 0) - performance.now();
    if (waitMs <= 0 || socket.connecting) {
      socket.destroy();
      return;
    }
    if (!socket.writableEnded) socket.end();
    this.#timer = setTimeout(() => {
      this.#timer = null;
      socket.destroy();
    }, waitMs);
  }

  #clearTimer(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    this.#armedAt = Infinity;
  }

  #error(): SmtpConnectionError {
    const failed = this.#failed!;
    return (this.#failure ??= new SmtpConnectionError(failed.kind, failed.message));
  }

  #release(): void {
    this.#clearTimer();
    if (this.#signal !== undefined) {
      this.#signal.removeEventListener('abort', this.#onAbort);
      this.#signal = undefined;
    }
    const onClose = this.#onClose;
    if (onClose !== undefined) {
      this.#onClose = undefined;
      onClose();
    }
  }
}

function errorKind(error: NodeJS.ErrnoException, duringTls: boolean): SmtpErrorKind {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'refused';
  if (
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    code === 'EADDRNOTAVAIL' ||
    code === 'EAFNOSUPPORT'
  ) {
    return 'unreachable';
  }
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'closed';
  if (duringTls || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return 'tls';
  return 'closed';
}

/** Happy Eyeballs over `address` and its alternates; a lost race as the connection error it stands for. */
async function raceConnect(options: OpenOptions): ReturnType<typeof connectFirst> {
  try {
    return await connectFirst(
      [
        { address: options.address, localAddress: options.localAddress ?? null },
        ...(options.alternates ?? []),
      ],
      {
        port: options.port,
        ...(options.lateAlternates === undefined ? {} : { more: options.lateAlternates }),
        ...(options.onLateJoin === undefined ? {} : { onJoin: options.onLateJoin }),
        attemptDelayMs: options.attemptDelayMs ?? DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
        deadlineAt: options.deadlineAt,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      },
    );
  } catch (error) {
    if (!(error instanceof RaceFailure)) throw error;
    const failure = error;
    switch (failure.kind) {
      case 'timeout':
        throw new SmtpConnectionError('timeout', 'no connection to any address before the deadline');
      case 'aborted':
        throw new SmtpConnectionError('destroyed', 'connection closed by the client');
      case 'failed':
        throw new SmtpConnectionError(
          failure.cause === undefined ? 'closed' : errorKind(failure.cause, false),
          `${failure.message} (every address of the host failed)`,
        );
    }
  }
}

async function connectThroughProxy(options: OpenOptions): Promise<net.Socket> {
  const proxy = options.proxy!;
  const timeout = Math.max(1, Math.floor(options.deadlineAt - performance.now()));
  try {
    const { socket } = await SocksClient.createConnection({
      command: 'connect',
      destination: { host: options.address, port: options.port },
      proxy: { host: proxy.host, port: proxy.port, type: 5, userId: proxy.userId, password: proxy.password },
      timeout,
      set_tcp_nodelay: true,
    });
    return socket;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const kind = /timed out/i.test(message) ? 'timeout' : 'proxy';
    throw new SmtpConnectionError(kind, `SOCKS5 proxy ${proxy.host}:${proxy.port}: ${message}`);
  }
}
