/**
 * A multi-recipient SMTP session on top of `SmtpConnection`: opened once per MX host (banner,
 * EHLO, opportunistic STARTTLS), then carrying many transactions and many RCPTs. `send` writes
 * a group of commands in one packet when the server offers PIPELINING (RFC 2920) and one at a
 * time otherwise, so the session runner never has to care which.
 */
import { isIP } from 'node:net';
import type { SmtpStage } from '../smtp/classify.js';
import { classifyReply } from '../smtp/classify.js';
import type { SocksProxyOptions } from '../smtp/connection.js';
import { SmtpConnection, SmtpConnectionError } from '../smtp/connection.js';
import type { SmtpReply } from '../smtp/reply.js';

export interface SessionTarget {
  /** MX host name, for evidence and the TLS server name. */
  exchange: string;
  /** IP address to connect to. */
  address: string;
}

export interface SessionOptions {
  port: number;
  /** Use PIPELINING when offered (off for the per-address baseline). */
  pipelining: boolean;
  heloName: string;
  proxy: SocksProxyOptions | null;
  /** Deadline of each step: connect + banner, EHLO, STARTTLS, each command group. */
  stepTimeoutMs: number;
}

/**
 * Why a host could not be used: `unavailable` (refused, 421, dropped) and `timeout` mean "try
 * later or try another MX"; `blocked` (a 5xx at the banner or to EHLO) is a decided answer about
 * the prober that holds for every recipient at this host.
 */
export interface HostFailure {
  kind: 'unavailable' | 'timeout' | 'blocked';
  /** The connection was refused or unreachable: another address of the same host may answer. */
  refused?: boolean;
  reply: SmtpReply | null;
  detail: string;
  tls: boolean;
}

export type OpenResult = { ok: true; session: RecipientSession } | { ok: false; failure: HostFailure };

/** Replies of one group, in order; `error` is set when the connection failed before the last. */
export interface GroupResult {
  replies: SmtpReply[];
  error: SmtpConnectionError | null;
}

/** An open session; see the module comment. */
export class RecipientSession {
  readonly target: SessionTarget;
  readonly #connection: SmtpConnection;
  readonly #stepTimeoutMs: number;
  readonly #pipelining: boolean;
  readonly #closed: Promise<void>;

  constructor(
    target: SessionTarget,
    connection: SmtpConnection,
    options: { stepTimeoutMs: number; pipelining: boolean },
    closed: Promise<void>,
  ) {
    this.target = target;
    this.#connection = connection;
    this.#stepTimeoutMs = options.stepTimeoutMs;
    this.#pipelining = options.pipelining;
    this.#closed = closed;
  }

  /** Whether groups go out in one write: the server offers PIPELINING and we may use it. */
  get pipelining(): boolean {
    return this.#pipelining && this.#connection.extensions.pipelining;
  }

  /** Whether the server offered SMTPUTF8 (RFC 6531): only then may a non-ASCII local part be written. */
  get smtpUtf8(): boolean {
    return this.#connection.extensions.smtpUtf8;
  }

  get tls(): boolean {
    return this.#connection.tls;
  }

  get usable(): boolean {
    return this.#connection.usable;
  }

  /**
   * Sends `lines` and collects their replies. Pipelined: one write, every reply read. One at a
   * time: stops early when `stopAfter(reply, index)` says the rest is pointless (a refused
   * MAIL FROM makes the RCPTs behind it meaningless).
   */
  async send(
    lines: readonly string[],
    stopAfter?: (reply: SmtpReply, index: number) => boolean,
  ): Promise<GroupResult> {
    const replies: SmtpReply[] = [];
    this.#connection.setDeadline(performance.now() + this.#stepTimeoutMs);
    try {
      if (this.pipelining) {
        for (const pending of this.#connection.pipeline(lines)) replies.push(await pending);
      } else {
        for (let i = 0; i < lines.length; i++) {
          const reply = await this.#connection.command(lines[i]!);
          replies.push(reply);
          if (stopAfter?.(reply, i) === true) break;
          // Each command gets a full step of its own, as in a pipelined group's one round trip.
          this.#connection.setDeadline(performance.now() + this.#stepTimeoutMs);
        }
      }
      return { replies, error: null };
    } catch (error) {
      if (error instanceof SmtpConnectionError) return { replies, error };
      throw error;
    }
  }

  /**
   * QUIT, resolved when the socket is gone (the server's close, or the step deadline at the
   * latest): until then the server still counts the session, so the per-host slot is held.
   */
  quit(): Promise<void> {
    this.#connection.setDeadline(performance.now() + this.#stepTimeoutMs);
    this.#connection.quit();
    return this.#closed;
  }

  destroy(): void {
    this.#connection.destroy();
  }
}

/**
 * Connects, reads the banner, says EHLO (HELO fallback) and upgrades with STARTTLS when offered;
 * a host whose TLS handshake fails is asked again in clear text, as the single probe does.
 */
export async function openRecipientSession(
  target: SessionTarget,
  options: SessionOptions,
): Promise<OpenResult> {
  const first = await attempt(target, options, true);
  if (first.ok || first.failure.detail !== TLS_FAILED) return first;
  return attempt(target, options, false);
}

const TLS_FAILED = 'tls';

async function attempt(
  target: SessionTarget,
  options: SessionOptions,
  allowTls: boolean,
): Promise<OpenResult> {
  let connection: SmtpConnection | null = null;
  let onClose: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    onClose = resolve;
  });
  try {
    connection = await SmtpConnection.open({
      address: target.address,
      port: options.port,
      deadlineAt: performance.now() + options.stepTimeoutMs,
      proxy: options.proxy,
      onClose,
    });
    const refusal = refused('banner', connection.banner, false);
    if (refusal !== null) return done(connection, refusal);

    connection.setDeadline(performance.now() + options.stepTimeoutMs);
    let greeting = await connection.ehlo(options.heloName);
    let greetingRefusal = refused('helo', greeting, false);
    if (greetingRefusal !== null) return done(connection, greetingRefusal);

    if (allowTls && connection.extensions.starttls) {
      connection.setDeadline(performance.now() + options.stepTimeoutMs);
      const reply = await connection.starttls(isIP(target.exchange) === 0 ? target.exchange : null);
      if (connection.tls) {
        connection.setDeadline(performance.now() + options.stepTimeoutMs);
        greeting = await connection.ehlo(options.heloName);
        greetingRefusal = refused('helo', greeting, true);
        if (greetingRefusal !== null) return done(connection, greetingRefusal);
      } else if (reply.code === 421) {
        return done(connection, {
          kind: 'unavailable',
          reply,
          detail: `STARTTLS: ${describe(reply)}`,
          tls: false,
        });
      }
    }
    const session = new RecipientSession(
      target,
      connection,
      { stepTimeoutMs: options.stepTimeoutMs, pipelining: options.pipelining },
      closed,
    );
    return { ok: true, session };
  } catch (error) {
    connection?.destroy();
    if (!(error instanceof SmtpConnectionError)) throw error;
    const tls = connection?.tls ?? false;
    switch (error.kind) {
      case 'timeout':
        return { ok: false, failure: { kind: 'timeout', reply: null, detail: error.message, tls } };
      case 'tls':
        return { ok: false, failure: { kind: 'unavailable', reply: null, detail: TLS_FAILED, tls } };
      case 'refused':
      case 'unreachable':
        return {
          ok: false,
          failure: { kind: 'unavailable', refused: true, reply: null, detail: error.message, tls },
        };
      case 'closed':
      case 'protocol':
      case 'proxy':
      case 'destroyed':
        return { ok: false, failure: { kind: 'unavailable', reply: null, detail: error.message, tls } };
    }
  }
}

function done(connection: SmtpConnection, failure: HostFailure): OpenResult {
  connection.quit();
  return { ok: false, failure };
}

/** The failure a banner or greeting reply means, or null when the dialogue may go on. */
function refused(stage: SmtpStage, reply: SmtpReply, tls: boolean): HostFailure | null {
  const verdict = classifyReply(stage, reply);
  if (verdict === 'continue') return null;
  const detail = `${stage}: ${describe(reply)}`;
  return verdict === 'blocked'
    ? { kind: 'blocked', reply, detail, tls }
    : { kind: 'unavailable', reply, detail, tls };
}

function describe(reply: SmtpReply): string {
  return `${reply.code} ${reply.message}`;
}
