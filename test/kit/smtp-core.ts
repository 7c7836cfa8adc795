/**
 * The raw SMTP server that the kit's hand-written mail hosts configure: the Postfix-like MTA
 * (test/kit/postfix-like-mta.ts), the pipelining MTA (test/kit/pipelining-mta.ts), the
 * misbehaving hosts of test/kit/smtp-servers.ts and the engine benchmark's MTA (bench/fake-mta.ts).
 * What smtp-server does not let a test do (hold a reply, answer a pipelined group in one write,
 * drop the line at a command, break STARTTLS) needs a server of our own; this is the one.
 *
 * It owns the sockets: listening on several loopback addresses on one port (each address a
 * distinct MX host, as on the internet all listen on 25), reading command lines (a read's
 * complete lines are handed over together, as a pipelining client sent them), writing replies
 * (at once or after a delay, the timers cleared at close), upgrading to TLS with the kit's
 * certificate, and counting connections and the sessions open at once per host and per client.
 * What each host answers is its handler's business.
 *
 * Besides the sessions a handler enters and leaves, it counts connections open at once the way
 * the server sees them (`peakConnected`), on both sides' socket events in the one order the
 * process sees them (a counter, not a clock): a connection counts from the moment the client
 * created its socket (`net.client.socket` diagnostics channel), so that a connection made before
 * another was let go is never missed however late the server accepts it, until the server let go
 * of it (it closed or reset it, or read the client's FIN or reset; Postfix's anvil counts the same
 * span, until smtpd ends). Load cannot fake an overlap: a client that waits for the server's close
 * creates its next socket after it, in the same order.
 */
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

const CERT_DIR = new URL('./certs/', import.meta.url);

/** The kit's self-signed certificate (test/kit/certs/), for STARTTLS. */
export function kitCertificate(): { key: Buffer; cert: Buffer } {
  return {
    key: readFileSync(new URL('key.pem', CERT_DIR)),
    cert: readFileSync(new URL('cert.pem', CERT_DIR)),
  };
}

/** One accepted connection, as a handler sees it. */
export interface SmtpConnection {
  /** The TCP socket (still the raw one after `startTls`). */
  readonly socket: net.Socket;
  /** The address the client connected to (the MX host), without `::ffff:`. */
  readonly host: string;
  /** The client's address, without `::ffff:`. */
  readonly client: string;
  /** Whether the session has been upgraded with `startTls`. */
  readonly secure: boolean;
  /** Writes `text` as is (no line end added); nothing once the socket is gone. */
  write(text: string): void;
  /** Writes `text` (if any) and closes this side. */
  end(text?: string): void;
  /** Resets the connection (an RST) and destroys it. */
  reset(): void;
  /** Writes `text` after `delayMs` (at once when 0), closing after it when `close`. Equal delays keep their order. */
  send(text: string, delayMs: number, close?: boolean): void;
  /** Runs `fn` after `ms` on a timer the server clears when it closes; clear it with `clearTimeout`. */
  after(ms: number, fn: () => void): NodeJS.Timeout;
  /** Counts this connection as a session open on its host from its client, until `leave`, a reset or the close. */
  enter(): void;
  /** Ends the session for the count (idempotent; the close does it too). */
  leave(): void;
  /** Reads no more lines: whatever the client sends from now on is ignored. */
  stopReading(): void;
  /** Hands the next chunk to `fn` as it came, instead of reading lines (a TLS ClientHello). */
  takeNextChunk(fn: (chunk: string) => void): void;
  /**
   * Upgrades to TLS with the kit's certificate, as the server side of STARTTLS: lines are read
   * from the TLS session, and `write`, `end` and `send` go into it. `onSecure` runs once the
   * handshake is done.
   */
  startTls(onSecure?: () => void): void;
}

/** What a host does with a connection; every hook is optional. */
export interface SmtpHandler {
  /** The complete lines of one read, in order, without their line ends (possibly none). */
  lines?(lines: string[]): void;
  /** The client's FIN (with `allowHalfOpen`, this side stays open until the handler ends it). */
  end?(): void;
  /** The connection is gone. */
  close?(): void;
}

export interface SmtpCoreOptions {
  /** Loopback addresses to listen on, all on one port. */
  hosts: string[];
  /** 0 (default): an ephemeral port picked on the first host, another one if a later host has it taken. */
  port?: number;
  /** Keep this side open after the client's FIN until the handler ends it (default false: close with it). */
  allowHalfOpen?: boolean;
  /** How bytes read become text (default latin1: any byte, one character). */
  encoding?: BufferEncoding;
  /** Sets up each accepted connection. */
  connection(conn: SmtpConnection): SmtpHandler | void;
}

/** Connections and sessions, as `SmtpCore.tally()` counts them since the start or `resetTally`. */
export interface SessionTally {
  /** TCP connections accepted, in all and per host. */
  connections: number;
  connectionsByHost: Record<string, number>;
  /** Sessions entered (`enter`), per host and per client. */
  sessionsByHost: Record<string, number>;
  sessionsByClient: Record<string, number>;
  /** Most sessions open at once: in all, per host, and from one client to one host (host -> client -> peak). */
  peakConcurrent: number;
  peakConcurrentByHost: Record<string, number>;
  peakConcurrentByClient: Record<string, Record<string, number>>;
}

export interface SmtpCore {
  readonly port: number;
  tally(): SessionTally;
  /** Sessions open now from `client` to `host`. */
  openFrom(host: string, client: string): number;
  /** Most connections open at once on `host` since the start, as the file comment says (measured when read). */
  peakConnected(host: string): number;
  /** The same, over several hosts together (the MX hosts of one provider). */
  peakConnectedAcross(hosts: readonly string[]): number;
  /** Starts the tally over (sessions open now stay open). */
  resetTally(): void;
  /** Clears the timers, destroys the connections and stops listening. */
  close(): Promise<void>;
}

/** Starts listening on every address of `options.hosts`; resolves once all listen. */
export async function startSmtpCore(options: SmtpCoreOptions): Promise<SmtpCore> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const openByHost = new Map<string, number>();
  const openByPair = new Map<string, number>();
  let open = 0;
  let tally = emptyTally();
  /** Per host: each accepted connection's client key, when it was accepted and let go of. */
  const spans = new Map<string, Span[]>();
  /** Per client key (mail host address and client port): when each such socket was created. */
  const clientStarts = new Map<string, number[]>();
  let order = 0;
  const tick = (): number => ++order;
  let port = options.port ?? 0;
  const onClientSocket = (message: unknown): void => {
    const created = tick();
    const { socket } = message as { socket: net.Socket };
    socket.once('connect', () => {
      if (socket.remotePort !== port || socket.remoteAddress === undefined) return;
      const key = `${socket.remoteAddress}:${socket.localPort}`;
      if (!clientStarts.has(key)) clientStarts.set(key, []);
      clientStarts.get(key)!.push(created);
    });
  };

  const after = (ms: number, fn: () => void): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return timer;
  };

  function onConnection(raw: net.Socket): void {
    const host = plain(raw.localAddress);
    const client = plain(raw.remoteAddress);
    const pair = `${host} ${client}`;
    sockets.add(raw);
    raw.setNoDelay(true);
    tally.connections += 1;
    tally.connectionsByHost[host] = (tally.connectionsByHost[host] ?? 0) + 1;
    const span: Span = { key: `${raw.localAddress}:${raw.remotePort}`, acceptedAt: tick(), leftAt: null };
    if (!spans.has(host)) spans.set(host, []);
    spans.get(host)!.push(span);
    /** The server lets go: it closes or resets, or reads the client's FIN or reset. */
    const letGo = (): void => {
      span.leftAt ??= tick();
    };

    let socket: net.Socket = raw;
    let entered = false;
    let left = false;
    let reading = true;
    let nextChunk: ((chunk: string) => void) | null = null;
    let pending = '';
    let handler: SmtpHandler = {};

    const onData = (chunk: string): void => {
      if (nextChunk !== null) {
        const take = nextChunk;
        nextChunk = null;
        take(chunk);
        return;
      }
      if (!reading) return;
      pending += chunk;
      const lines: string[] = [];
      let newline = pending.indexOf('\n');
      while (newline !== -1) {
        lines.push(pending.slice(0, newline > 0 && pending[newline - 1] === '\r' ? newline - 1 : newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
      handler.lines?.(lines);
    };

    const conn: SmtpConnection = {
      socket: raw,
      host,
      client,
      get secure() {
        return socket !== raw;
      },
      write: (text) => {
        if (!socket.destroyed) socket.write(text);
      },
      end: (text) => {
        if (socket.destroyed) return;
        letGo();
        if (text === undefined) socket.end();
        else socket.end(text);
      },
      reset: () => {
        letGo();
        raw.resetAndDestroy();
      },
      send: (text, delayMs, close = false) => {
        const write = (): void => (close ? conn.end(text) : conn.write(text));
        if (delayMs > 0) after(delayMs, write);
        else write();
      },
      after,
      enter: () => {
        if (entered) return;
        entered = true;
        const fromClient = (openByPair.get(pair) ?? 0) + 1;
        openByPair.set(pair, fromClient);
        const onHost = (openByHost.get(host) ?? 0) + 1;
        openByHost.set(host, onHost);
        open += 1;
        tally.sessionsByHost[host] = (tally.sessionsByHost[host] ?? 0) + 1;
        tally.sessionsByClient[client] = (tally.sessionsByClient[client] ?? 0) + 1;
        tally.peakConcurrentByHost[host] = Math.max(tally.peakConcurrentByHost[host] ?? 0, onHost);
        const byClient = (tally.peakConcurrentByClient[host] ??= {});
        byClient[client] = Math.max(byClient[client] ?? 0, fromClient);
        tally.peakConcurrent = Math.max(tally.peakConcurrent, open);
      },
      leave: () => {
        if (!entered || left) return;
        left = true;
        openByPair.set(pair, (openByPair.get(pair) ?? 1) - 1);
        openByHost.set(host, (openByHost.get(host) ?? 1) - 1);
        open -= 1;
      },
      stopReading: () => {
        reading = false;
      },
      takeNextChunk: (fn) => {
        nextChunk = fn;
      },
      startTls: (onSecure) => {
        raw.off('data', onData);
        const secure = new tls.TLSSocket(raw, { isServer: true, ...kitCertificate() });
        secure.on('error', () => undefined);
        if (onSecure !== undefined) secure.once('secure', onSecure);
        secure.on('end', () => {
          letGo();
          handler.end?.();
        });
        secure.setEncoding(options.encoding ?? 'latin1');
        socket = secure;
        // Nothing the client sent in clear after STARTTLS counts (RFC 3207 §4.2).
        pending = '';
        reading = true;
        secure.on('data', onData);
      },
    };

    // A reset from the client is its leaving ('close' comes a loop iteration later).
    raw.on('error', () => {
      letGo();
      conn.leave();
      raw.destroy();
    });
    raw.on('end', () => {
      letGo();
      if (socket === raw) handler.end?.();
    });
    raw.on('close', () => {
      sockets.delete(raw);
      letGo();
      conn.leave();
      handler.close?.();
    });
    raw.setEncoding(options.encoding ?? 'latin1');
    raw.on('data', onData);
    handler = options.connection(conn) ?? {};
  }

  const servers: net.Server[] = [];
  const closeServers = async (): Promise<void> => {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  };
  diagnostics.subscribe('net.client.socket', onClientSocket);
  for (let attempt = 0; ; attempt++) {
    try {
      for (const host of options.hosts) {
        const server = net.createServer({ allowHalfOpen: options.allowHalfOpen ?? false }, onConnection);
        servers.push(server);
        port = (await listen(server, host, port)).port;
      }
      break;
    } catch (error) {
      // The first host's ephemeral port may be taken on another address: try another one.
      await closeServers();
      servers.length = 0;
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 10 || options.port) {
        diagnostics.unsubscribe('net.client.socket', onClientSocket);
        throw error;
      }
      port = 0;
    }
  }

  return {
    port,
    tally: () => structuredClone(tally),
    openFrom: (host, client) => openByPair.get(`${host} ${client}`) ?? 0,
    peakConnected: (host) => peakOf(spans.get(host) ?? [], clientStarts),
    // Client keys name the host, so one host's spans never meet another's in the sweep.
    peakConnectedAcross: (hosts) =>
      peakOf(
        hosts.flatMap((host) => spans.get(host) ?? []),
        clientStarts,
      ),
    resetTally: () => {
      tally = emptyTally();
    },
    close: async () => {
      diagnostics.unsubscribe('net.client.socket', onClientSocket);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await closeServers();
    },
  };
}

/**
 * Listens on `ip`:`port` (0: an ephemeral one) and resolves with the port, or rejects (EADDRINUSE
 * when another address has that port). For the kit's `smtp-server` hosts too.
 */
export function listen(
  server: net.Server,
  ip: string,
  port: number,
): Promise<{ port: number; close: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: ip, port, exclusive: true }, () => {
      server.off('error', reject);
      const address = server.address() as net.AddressInfo;
      resolve({
        port: address.port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

/** One accepted connection as `peakConnected` counts it: its client key, and the order of its accept and let-go. */
interface Span {
  key: string;
  acceptedAt: number;
  leftAt: number | null;
}

/**
 * The peak of open connections over a host's spans: a sweep in event order. A span starts when
 * its client socket was created: the latest one with its key created before the accept (and after
 * the key's previous accept). A client reset before it saw its 'connect' event left no key: that
 * span starts at the accept, as the server counts it.
 */
function peakOf(spans: Span[], clientStarts: Map<string, number[]>): number {
  const previousAccept = new Map<string, number>();
  const events: [number, number][] = [];
  for (const span of spans) {
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
}

function plain(address: string | undefined): string {
  return (address ?? '?').replace(/^::ffff:/, '');
}

function emptyTally(): SessionTally {
  return {
    connections: 0,
    connectionsByHost: {},
    sessionsByHost: {},
    sessionsByClient: {},
    peakConcurrent: 0,
    peakConcurrentByHost: {},
    peakConcurrentByClient: {},
  };
}
