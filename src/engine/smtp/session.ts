/**
 * One SMTP session, written once for the single probe (../probe.ts) and the batch sessions
 * (batch/pooled-session.ts): the greeting — connect (direct or through SOCKS5), banner, EHLO with
 * HELO fallback, opportunistic STARTTLS and EHLO again, and the whole greeting once more in clear
 * text when the TLS handshake fails — then commands, pipelined groups and QUIT.
 *
 * What differs between the two users is the deadline rule, a parameter: the single probe shares
 * one budget among its steps (`budgetDeadlines`), a batch session gives each step its own
 * (`stepDeadlines`). Every way a greeting can fail comes back as a `HostFailure` that says at
 * which stage and why, never as an exception (except for a programming error).
 */
import { isIP } from 'node:net';
import { classifyReply } from './classify.js';
import type { SmtpErrorKind, SocksProxyOptions } from './connection.js';
import { SmtpConnection, SmtpConnectionError } from './connection.js';
import type { EhloExtensions, SmtpReply } from './reply.js';
import type { WireRecorder } from './transcript.js';
import type { HeldReplies } from './held-replies.js';
import type { ConnectCandidate } from '../net/happy-eyeballs.js';

/** Where in a session something happened (also the `stage` label of the given-up metric). */
export type SessionStage = 'connect' | 'banner' | 'ehlo' | 'starttls' | 'mail' | 'rcpt' | 'rset' | 'quit';

/**
 * Why a host could not be used. `unavailable` (refused, 421, dropped, garbage) and `timeout`
 * mean "try later or try another MX"; `blocked` (a 5xx at the banner, to EHLO or to MAIL FROM,
 * or policy refusals at RCPT) is an answer about the prober that holds for every recipient at
 * the host; `greylisted` is a temporary refusal of the sender at MAIL FROM.
 */
export type HostFailureKind = 'unavailable' | 'timeout' | 'blocked' | 'greylisted';

export interface HostFailure {
  kind: HostFailureKind;
  stage: SessionStage;
  /** A reply that refused (`reply`), how the connection failed, or `backed-off` (not asked: it rests). */
  cause: 'reply' | SmtpErrorKind | 'backed-off';
  reply: SmtpReply | null;
  detail: string;
  tls: boolean;
}

/** The connection was refused or unreachable: another address of the same host may answer. */
export function connectionRefused(failure: HostFailure): boolean {
  return failure.cause === 'refused' || failure.cause === 'unreachable';
}

/** When each step must be done, as `performance.now()` instants. */
export interface Deadlines {
  /** Connect and banner; `retry` for the clear-text greeting after a failed TLS handshake. */
  greeting(retry: boolean): number;
  /** A step starting now: EHLO, STARTTLS, a command or a pipelined group, QUIT. */
  step(): number;
}

/** Every step gets `stepMs` of its own (batch sessions: a session may carry hundreds of steps). */
export function stepDeadlines(stepMs: number): Deadlines {
  return { greeting: () => performance.now() + stepMs, step: () => performance.now() + stepMs };
}

/**
 * One budget for the whole dialogue (the single probe): connect and banner by `greetingAt` (the
 * host's share, so that a silent MX cannot eat the next one's time), everything else, the
 * clear-text retry included, by `deadlineAt`.
 */
export function budgetDeadlines(greetingAt: number, deadlineAt: number): Deadlines {
  return { greeting: (retry) => (retry ? deadlineAt : greetingAt), step: () => deadlineAt };
}

export interface SessionTarget {
  /** MX host name: the TLS server name and the evidence. */
  exchange: string;
  /** The IP address to connect to. */
  address: string;
}

export interface SessionOptions {
  port: number;
  heloName: string;
  proxy: SocksProxyOptions | null;
  /** The egress's source address to connect from (unused through a proxy); absent: the system's. */
  localAddress?: string | null;
  deadlines: Deadlines;
  /** Aborting destroys the connection; what is pending fails with cause `destroyed`. */
  signal?: AbortSignal;
  /** The verification's transcript (transcript.ts): the greeting and what follows go there. */
  recorder?: WireRecorder | null;
  /** STARTTLS (docs/prober.md#starttls); default `opportunistic`. */
  starttls?: StarttlsMode;
  /**
   * Other addresses of the host raced by Happy Eyeballs (../net/happy-eyeballs.ts); the session's
   * `target.address` is then the one that connected first.
   */
  alternates?: readonly ConnectCandidate[];
  /**
   * Addresses of the family whose DNS answer had not come when the race began (RFC 8305 §3):
   * they join the race when they come, and the transcript says so (`[then ADDRESS]`).
   */
  lateAlternates?: Promise<readonly ConnectCandidate[]>;
  /** Happy Eyeballs' Connection Attempt Delay (default 250 ms). */
  attemptDelayMs?: number;
  /**
   * The hosts that hold their reply behind their TLS 1.3 session tickets (held-replies.ts): the
   * EHLO after TLS waits for the first ticket at those, and each TLS session teaches it. Absent:
   * the EHLO always goes with the TLS Finished.
   */
  heldReplies?: HeldReplies;
  /** How much later than the first ticket a reply counts as held (held-replies.ts); default 20 ms. */
  heldReplyMarginMs?: number;
}

/**
 * `opportunistic`: STARTTLS when the server offers it, clear text when it does not or the
 * handshake fails (3 more round trips on TLS); `never`: clear text always (the recipient address
 * crosses the network readable); `required`: a server without working STARTTLS is not asked.
 */
export type StarttlsMode = 'opportunistic' | 'never' | 'required';
export const STARTTLS_MODES: readonly StarttlsMode[] = ['opportunistic', 'never', 'required'];

export type OpenResult =
  | { ok: true; session: SmtpSession }
  /**
   * `closed` resolves once the server no longer counts the connection (SmtpConnection: it closed
   * its side, or our FIN had time to reach it), at the step deadline at the latest: a caller that
   * holds a per-host slot keeps it until then.
   */
  | {
      ok: false;
      failure: HostFailure;
      closed: Promise<void>;
      /** The address the failed session had connected to (Happy Eyeballs' winner), if it had. */
      connectedTo?: string;
    };

/** Replies of one group, in order; `error` is set when the connection failed before the last. */
export interface GroupResult {
  replies: SmtpReply[];
  error: SmtpConnectionError | null;
}

/** An open session: greeted, over TLS when the server offered it. */
export class SmtpSession {
  readonly target: SessionTarget;
  readonly #connection: SmtpConnection;
  #deadlines: Deadlines;
  readonly #closed: Promise<void>;

  /** Built by `openSession`, greeted. */
  constructor(
    target: SessionTarget,
    connection: SmtpConnection,
    deadlines: Deadlines,
    closed: Promise<void>,
  ) {
    this.target = target;
    this.#connection = connection;
    this.#deadlines = deadlines;
    this.#closed = closed;
  }

  get tls(): boolean {
    return this.#connection.tls;
  }

  /** What the last EHLO announced (after STARTTLS, the second one's). */
  get extensions(): EhloExtensions {
    return this.#connection.extensions;
  }

  get usable(): boolean {
    return this.#connection.usable;
  }

  /** The transcript of the verification using the session now (null: none); see transcript.ts. */
  set recorder(recorder: WireRecorder | null) {
    this.#connection.recorder = recorder;
  }

  /** Resolves once the server no longer counts the connection (a per-host slot is held until then). */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /** The deadline rule from now on: a warm session (../sessions/warm-pool.ts) takes each verification's budget. */
  useDeadlines(deadlines: Deadlines): void {
    this.#deadlines = deadlines;
  }

  /** The current deadline rule (the connection's close waits by its step deadline). */
  get deadlines(): Deadlines {
    return this.#deadlines;
  }

  /** Nothing pending: the connection waits without a deadline (a warm session's own idle timer ends it). */
  idle(): void {
    this.#connection.setDeadline(Infinity);
  }

  /** One command; its reply must come by the step deadline. */
  command(line: string): Promise<SmtpReply> {
    this.#connection.setDeadline(this.#deadlines.step());
    return this.#connection.command(line);
  }

  /**
   * Several commands in one write (RFC 2920; the server must offer PIPELINING), one promise per
   * reply, every reply by one step deadline. Each promise already has a handler attached.
   */
  pipeline(lines: readonly string[]): Promise<SmtpReply>[] {
    this.#connection.setDeadline(this.#deadlines.step());
    return this.#connection.pipeline(lines);
  }

  /**
   * Sends a group and collects its replies: in one write when `pipelined`, otherwise one command
   * per round trip, stopping early when `stopAfter(reply, index)` says the rest is pointless (a
   * refused MAIL FROM makes the RCPTs behind it meaningless).
   */
  async send(
    lines: readonly string[],
    pipelined: boolean,
    stopAfter?: (reply: SmtpReply, index: number) => boolean,
  ): Promise<GroupResult> {
    const replies: SmtpReply[] = [];
    try {
      if (pipelined) {
        for (const pending of this.pipeline(lines)) replies.push(await pending);
      } else {
        for (let i = 0; i < lines.length; i++) {
          const reply = await this.command(lines[i]!);
          replies.push(reply);
          if (stopAfter?.(reply, i) === true) break;
        }
      }
      return { replies, error: null };
    } catch (error) {
      if (error instanceof SmtpConnectionError) return { replies, error };
      throw error;
    }
  }

  /**
   * QUIT, resolved when the server no longer counts the connection (SmtpConnection): `closed`
   * when the server closed it, `timeout` when it was still open at the step deadline (then
   * destroyed). Until then a per-host slot is held. A connection that had already failed resolves
   * `closed` once it is released: its failure was reported at its own stage.
   */
  async quit(): Promise<'closed' | 'timeout'> {
    if (!this.#connection.usable) {
      await this.#closed;
      return 'closed';
    }
    this.#connection.setDeadline(this.#deadlines.step());
    this.#connection.quit();
    await this.#closed;
    return this.#connection.ended === 'timeout' ? 'timeout' : 'closed';
  }

  destroy(): void {
    this.#connection.destroy();
  }

  /** EHLO (HELO when EHLO is refused with 5xx) by the step deadline; part of the greeting. */
  async ehlo(name: string): Promise<SmtpReply> {
    this.#connection.setDeadline(this.#deadlines.step());
    return this.#connection.ehlo(name);
  }

  /** STARTTLS by the step deadline (then EHLO again); part of the greeting. */
  async starttls(awaitTicket = false): Promise<SmtpReply> {
    this.#connection.setDeadline(this.#deadlines.step());
    const servername = isIP(this.target.exchange) === 0 ? this.target.exchange : null;
    return this.#connection.starttls(servername, awaitTicket);
  }
}

/**
 * Connects and greets; a host whose TLS handshake fails is greeted again in clear text (the
 * probe wants privacy from passive observers, not authentication, and a broken TLS set-up says
 * nothing about the mailboxes).
 */
export async function openSession(target: SessionTarget, options: SessionOptions): Promise<OpenResult> {
  const first = await greet(target, options, false);
  if (first.ok || first.failure.cause !== 'tls') return first;
  // Required TLS that failed is not retried in clear text.
  if (options.starttls === 'required') return { ...first, failure: tlsRequired(first.failure.detail) };
  // The retry is the same session to the server's count: it opens once the first has closed.
  await first.closed;
  if (options.deadlines.greeting(true) <= performance.now()) return first;
  // The clear-text retry goes to the address that connected, without a new race.
  const { alternates: _raced, lateAlternates: _late, ...retryOptions } = options;
  return greet({ ...target, address: first.connectedTo ?? target.address }, retryOptions, true);
}

async function greet(target: SessionTarget, options: SessionOptions, retry: boolean): Promise<OpenResult> {
  let connection: SmtpConnection | null = null;
  let stage: SessionStage = 'connect';
  let markClosed: () => void = () => undefined;
  let session: SmtpSession | null = null;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const recorder = options.recorder ?? null;
  const alternates = options.proxy === null ? (options.alternates ?? []) : [];
  const raced = alternates.length === 0 ? '' : `, then ${alternates.map((a) => a.address).join(', ')}`;
  recorder?.record('out', `[connect ${target.exchange} (${target.address}${raced}) port ${options.port}]`);
  const late = options.proxy === null && !retry ? options.lateAlternates : undefined;
  try {
    connection = await SmtpConnection.open({
      address: target.address,
      ...(alternates.length === 0 ? {} : { alternates }),
      ...(late === undefined
        ? {}
        : {
            lateAlternates: late,
            onLateJoin: (added: readonly ConnectCandidate[]) =>
              recorder?.record('out', `[then ${added.map((a) => a.address).join(', ')}]`),
          }),
      ...(options.attemptDelayMs === undefined ? {} : { attemptDelayMs: options.attemptDelayMs }),
      port: options.port,
      deadlineAt: options.deadlines.greeting(retry),
      proxy: options.proxy,
      localAddress: options.localAddress ?? null,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      // A warm session changes its deadline rule (useDeadlines): its close follows the current one.
      closeBy: () => (session?.deadlines ?? options.deadlines).step(),
      onClose: () => markClosed(),
      recorder,
      ...(options.heldReplyMarginMs === undefined ? {} : { heldReplyMarginMs: options.heldReplyMarginMs }),
    });
    if (connection.address !== target.address) {
      recorder?.record('out', `[connected to ${connection.address}]`);
      target = { ...target, address: connection.address };
    }
    session = new SmtpSession(target, connection, options.deadlines, closed);
    stage = 'banner';
    const bannerRefused = refusal('banner', connection.banner, false);
    if (bannerRefused !== null) return refused(session, bannerRefused);

    stage = 'ehlo';
    let greeting = await session.ehlo(options.heloName);
    let greetingRefused = refusal('ehlo', greeting, false);
    if (greetingRefused !== null) return refused(session, greetingRefused);

    const mode = options.starttls ?? 'opportunistic';
    if (mode === 'required' && !connection.extensions.starttls)
      return refused(session, tlsRequired('the server does not offer STARTTLS'));
    if (!retry && mode !== 'never' && connection.extensions.starttls) {
      stage = 'starttls';
      const held = options.heldReplies;
      const reply = await session.starttls(held?.holds(target.address) === true);
      if (session.tls) {
        stage = 'ehlo';
        greeting = await session.ehlo(options.heloName);
        held?.learn(target.address, connection.ticketsAfterTls(performance.now()));
        greetingRefused = refusal('ehlo', greeting, true);
        if (greetingRefused !== null) return refused(session, greetingRefused);
      } else if (reply.code === 421) {
        // Any other refusal of STARTTLS: the dialogue goes on in clear text.
        const failure: HostFailure = {
          kind: 'unavailable',
          stage,
          cause: 'reply',
          reply,
          detail: `starttls: ${describe(reply)}`,
          tls: false,
        };
        return refused(session, failure);
      }
      if (!session.tls && mode === 'required')
        return refused(session, tlsRequired(`STARTTLS refused: ${describe(reply)}`));
    }
    return { ok: true, session };
  } catch (error) {
    connection?.destroy();
    if (!(error instanceof SmtpConnectionError)) throw error;
    recorder?.record('in', `[${error.kind}: ${error.message}]`);
    if (
      connection === null &&
      error.kind !== 'refused' &&
      error.kind !== 'unreachable' &&
      error.kind !== 'proxy'
    )
      stage = 'banner';
    return {
      ok: false,
      failure: failureOf(error, stage, connection?.tls ?? false),
      closed,
      ...(connection === null ? {} : { connectedTo: connection.address }),
    };
  }
}

/** `--starttls required` and no TLS: the host is not asked (an honest unknown, smtp_unavailable). */
function tlsRequired(why: string): HostFailure {
  return {
    kind: 'unavailable',
    stage: 'starttls',
    cause: 'tls',
    reply: null,
    detail: `starttls: required (--starttls required) but not possible: ${why}`,
    tls: false,
  };
}

/** Says QUIT after a refusal; the server's close is left to the caller to await (or not). */
function refused(session: SmtpSession, failure: HostFailure): OpenResult {
  return {
    ok: false,
    failure,
    closed: session.quit().then(() => undefined),
    connectedTo: session.target.address,
  };
}

/** The failure a banner or greeting reply means, or null when the dialogue may go on. */
function refusal(stage: 'banner' | 'ehlo', reply: SmtpReply, tls: boolean): HostFailure | null {
  const verdict = classifyReply(stage === 'banner' ? 'banner' : 'helo', reply);
  if (verdict === 'continue') return null;
  return {
    kind: verdict === 'blocked' ? 'blocked' : 'unavailable',
    stage,
    cause: 'reply',
    reply,
    detail: `${stage}: ${describe(reply)}`,
    tls,
  };
}

/** The failure a connection error at `stage` means. */
export function failureOf(error: SmtpConnectionError, stage: SessionStage, tls: boolean): HostFailure {
  const kind = error.kind === 'timeout' ? 'timeout' : 'unavailable';
  return { kind, stage, cause: error.kind, reply: null, detail: `${stage}: ${error.message}`, tls };
}

export function describe(reply: SmtpReply): string {
  return `${reply.code} ${reply.message}`;
}
