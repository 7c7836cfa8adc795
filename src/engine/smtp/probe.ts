/**
 * The single-address SMTP probe: asks the domain's mail hosts whether they would accept mail
 * for an address, without ever sending DATA, and (once per domain, then cached) whether they
 * accept a random improbable address too (catch-all).
 *
 * Hosts are tried in the order the resolver gives, up to `maxMxHosts`; a host that refuses the
 * connection, stays silent, drops the line or answers 421 hands over to the next. The first
 * host that answers RCPT decides. `timeoutMs` bounds the whole probe: the connect and banner
 * of each host get a share of what remains (so a silent first MX cannot eat the budget of the
 * second), the dialogue after the banner may use all of it.
 *
 * An address whose local part is not ASCII is asked about only where the server offers SMTPUTF8
 * (smtputf8.ts). The first host that greets decides that too, as for a reply to RCPT: the probe
 * QUITs without MAIL FROM and does not try the next MX, because a sending MTA does not either
 * (Postfix bounces the message, 5.6.7 "SMTPUTF8 is required, but was not offered by host").
 */
import { getRandomValues } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { isIP } from 'node:net';
import type { MailHost, SmtpEvidence, SmtpOutcome, SmtpOutcomeKind } from '../outcome.js';
import type { SmtpOptions } from '../types.js';
import type { ReplyVerdict, SmtpStage } from './classify.js';
import { classifyReply } from './classify.js';
import type { SocksProxyOptions } from './connection.js';
import { SmtpConnection, SmtpConnectionError, parseProxyUrl } from './connection.js';
import type { SmtpReply } from './reply.js';
import { addressNeedsSmtpUtf8, unicodeUnsupported } from './smtputf8.js';

export interface ProbeRequest {
  /**
   * `local@domain` as it goes into RCPT TO (syntax-checked: no CR/LF can be in it, the domain in
   * ASCII). A local part that is not ASCII makes the probe use SMTPUTF8 (RFC 6531).
   */
  address: string;
  domain: string;
  /** Mail hosts in the order to try them. */
  hosts: readonly MailHost[];
  timeoutMs: number;
}

export interface ProberDeps {
  /** Milliseconds since the epoch; drives the catch-all cache. */
  clock?: () => number;
  /** In [0, 1); picks the catch-all local part and the proxy. Defaults to crypto randomness. */
  random?: () => number;
}

/** Probe settings: the engine's SMTP options and the catch-all cache lifetime. */
export interface ProberOptions extends SmtpOptions {
  catchAllTtlMs: number;
}

/** Bounds memory on batches over very many domains; the oldest entries go first. */
const MAX_CATCH_ALL_ENTRIES = 50_000;
const LOCAL_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const LOCAL_LENGTH = 24;

/**
 * A random local part nobody has, for the catch-all test: a letter first (some servers refuse a
 * local part that starts with a digit), then letters and digits. Shared with the batch engine.
 */
export function improbableLocalPart(random: () => number): string {
  let local = '';
  for (let i = 0; i < LOCAL_LENGTH; i++) {
    const range = i === 0 ? 26 : LOCAL_ALPHABET.length;
    local += LOCAL_ALPHABET[Math.floor(random() * range) % range];
  }
  return local;
}

/** What one connection to one host concluded. */
type HostResult =
  | {
      type: 'decided';
      kind: Exclude<SmtpOutcomeKind, 'unavailable' | 'timeout'>;
      reply: SmtpReply;
      catchAll: boolean | null;
      tls: boolean;
    }
  /** The address needs SMTPUTF8 and the host did not offer it: decided without asking. */
  | { type: 'unicode_unsupported'; tls: boolean }
  | {
      type: 'next';
      reason: 'refused' | 'timeout' | 'failed' | 'tls';
      detail: string;
      reply: SmtpReply | null;
      tls: boolean;
    };

/** Probes addresses over SMTP; one instance serves many probes and caches catch-all answers. */
export class SmtpProber {
  readonly #options: ProberOptions;
  readonly #clock: () => number;
  readonly #random: () => number;
  readonly #proxies: SocksProxyOptions[];
  readonly #catchAll = new Map<string, { value: boolean; expiresAt: number }>();
  /** Aborted by close(): destroys every connection, including those still connecting. */
  readonly #closing = new AbortController();

  constructor(options: ProberOptions, deps: ProberDeps = {}) {
    this.#options = options;
    this.#clock = deps.clock ?? Date.now;
    this.#random = deps.random ?? cryptoRandom();
    this.#proxies = options.proxies.map(parseProxyUrl);
    // Every connection in flight listens on this one signal; hundreds at once are expected.
    setMaxListeners(0, this.#closing.signal);
  }

  /**
   * Probes one address. Every network failure is an outcome with its evidence; it rejects only
   * on a programming error, such as a command line with CR/LF (SmtpCommandError).
   */
  async probe(request: ProbeRequest): Promise<SmtpOutcome> {
    const startedAt = performance.now();
    const deadlineAt = startedAt + request.timeoutMs;
    const hosts = request.hosts.slice(0, this.#options.maxMxHosts);
    let last: Extract<HostResult, { type: 'next' }> | null = null;
    let lastHost: string | null = null;
    let timedOut = false;

    for (let i = 0; i < hosts.length && !this.#closing.signal.aborted; i++) {
      const host = hosts[i]!;
      for (const address of host.addresses) {
        const now = performance.now();
        if (now >= deadlineAt) {
          timedOut = true;
          break;
        }
        // Connect and banner get this host's share of what is left; the dialogue gets the rest.
        const greetingAt = now + (deadlineAt - now) / (hosts.length - i);
        lastHost = host.exchange;
        let result = await this.#session(host, address, request, greetingAt, deadlineAt, true);
        // Opportunistic TLS: a host whose TLS is broken is asked again in clear text.
        if (result.type === 'next' && result.reason === 'tls' && performance.now() < deadlineAt) {
          result = await this.#session(host, address, request, deadlineAt, deadlineAt, false);
        }
        if (result.type === 'decided') {
          return {
            kind: result.kind,
            catchAll: result.catchAll,
            evidence: evidence(host.exchange, result.reply, null, result.tls, startedAt),
          };
        }
        if (result.type === 'unicode_unsupported') {
          return unicodeUnsupported(host.exchange, result.tls, Math.round(performance.now() - startedAt));
        }
        last = result;
        if (result.reason === 'timeout') timedOut = true;
        // Another address of the same host only helps when this one could not be reached.
        if (result.reason !== 'refused') break;
      }
      if (performance.now() >= deadlineAt) {
        timedOut = true;
        break;
      }
    }

    const kind: SmtpOutcomeKind = timedOut ? 'timeout' : 'unavailable';
    const detail =
      last === null
        ? hosts.length === 0
          ? 'no mail host to try (internal addresses are not probed)'
          : 'time budget ran out'
        : timedOut && last.reason !== 'timeout'
          ? `time budget ran out (last: ${last.detail})`
          : last.detail;
    return {
      kind,
      catchAll: null,
      evidence: evidence(lastHost, last?.reply ?? null, detail, last?.tls ?? false, startedAt),
    };
  }

  /** Destroys every open connection; later probes end as unavailable. */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  async #session(
    host: MailHost,
    address: string,
    request: ProbeRequest,
    greetingAt: number,
    deadlineAt: number,
    allowTls: boolean,
  ): Promise<HostResult> {
    let connection: SmtpConnection | null = null;
    let tls = false;
    try {
      connection = await SmtpConnection.open({
        address,
        port: this.#options.port,
        deadlineAt: greetingAt,
        proxy: this.#pickProxy(),
        signal: this.#closing.signal,
      });
      connection.setDeadline(deadlineAt);

      const banner = classifyReply('banner', connection.banner);
      if (banner !== 'continue') return stop(banner, connection.banner, tls, 'banner');

      let greeting = await connection.ehlo(this.#options.heloName);
      let verdict = classifyReply('helo', greeting);
      if (verdict !== 'continue') return stop(verdict, greeting, tls, 'helo');

      if (allowTls && connection.extensions.starttls) {
        const reply = await connection.starttls(isIP(host.exchange) === 0 ? host.exchange : null);
        if (connection.tls) {
          tls = true;
          greeting = await connection.ehlo(this.#options.heloName);
          verdict = classifyReply('helo', greeting);
          if (verdict !== 'continue') return stop(verdict, greeting, tls, 'helo');
        } else if (reply.code === 421) {
          return stop('next_host', reply, tls, 'helo');
        }
      }

      // Decided on the last greeting's extensions: after STARTTLS, the second EHLO's.
      const smtpUtf8 = addressNeedsSmtpUtf8(request.address);
      if (smtpUtf8 && !connection.extensions.smtpUtf8) return { type: 'unicode_unsupported', tls };
      return await this.#transaction(connection, request, tls, smtpUtf8);
    } catch (error) {
      return failed(error, tls);
    } finally {
      connection?.quit();
    }
  }

  /**
   * MAIL FROM (with SMTPUTF8 when the address needs it, which the server then offers), RCPT TO
   * and, when the domain's catch-all answer is not cached, a second RCPT.
   */
  async #transaction(
    connection: SmtpConnection,
    request: ProbeRequest,
    tls: boolean,
    smtpUtf8: boolean,
  ): Promise<HostResult> {
    const mailFrom = `MAIL FROM:<${this.#options.mailFrom}>${smtpUtf8 ? ' SMTPUTF8' : ''}`;
    const rcpt = `RCPT TO:<${request.address}>`;
    const cached = this.#cachedCatchAll(request.domain);
    const probe = cached === null ? `RCPT TO:<${improbableLocalPart(this.#random)}@${request.domain}>` : null;

    let mailReply: Promise<SmtpReply>;
    let rcptReply: Promise<SmtpReply> | null = null;
    let probeReply: Promise<SmtpReply> | null = null;
    if (connection.extensions.pipelining) {
      // RFC 2920: MAIL and RCPTs go in one packet, saving a round trip per command. The second
      // RCPT is sent even if the first is refused; its answer is then simply not used.
      const replies = connection.pipeline(probe === null ? [mailFrom, rcpt] : [mailFrom, rcpt, probe]);
      mailReply = replies[0]!;
      rcptReply = replies[1]!;
      probeReply = replies[2] ?? null;
    } else {
      mailReply = connection.command(mailFrom);
    }

    const mail = await mailReply;
    const mailVerdict = classifyReply('mail', mail);
    if (mailVerdict !== 'continue') return stop(mailVerdict, mail, tls, 'mail');

    const recipient = await (rcptReply ?? connection.command(rcpt));
    const verdict = classifyReply('rcpt', recipient);
    if (verdict !== 'accepted') return stop(verdict, recipient, tls, 'rcpt');

    let catchAll = cached;
    if (probe !== null) {
      catchAll = await this.#catchAllAnswer(connection, probeReply, probe);
      if (catchAll !== null) this.#rememberCatchAll(request.domain, catchAll);
    }
    return { type: 'decided', kind: 'accepted', reply: recipient, catchAll, tls };
  }

  /** True/false when the random address was accepted/refused as unknown; null when unclear. */
  async #catchAllAnswer(
    connection: SmtpConnection,
    pending: Promise<SmtpReply> | null,
    line: string,
  ): Promise<boolean | null> {
    try {
      const reply = await (pending ?? connection.command(line));
      const verdict = classifyReply('rcpt', reply);
      if (verdict === 'accepted') return true;
      if (verdict === 'rejected') return false;
      return null;
    } catch {
      // The real recipient's answer is decided; a lost second answer only leaves catch-all open.
      return null;
    }
  }

  #cachedCatchAll(domain: string): boolean | null {
    const entry = this.#catchAll.get(domain);
    if (entry === undefined) return null;
    if (entry.expiresAt > this.#clock()) return entry.value;
    this.#catchAll.delete(domain);
    return null;
  }

  #rememberCatchAll(domain: string, value: boolean): void {
    this.#catchAll.delete(domain);
    if (this.#catchAll.size >= MAX_CATCH_ALL_ENTRIES) {
      const oldest = this.#catchAll.keys().next();
      if (oldest.done !== true) this.#catchAll.delete(oldest.value);
    }
    this.#catchAll.set(domain, { value, expiresAt: this.#clock() + this.#options.catchAllTtlMs });
  }

  #pickProxy(): SocksProxyOptions | null {
    if (this.#proxies.length === 0) return null;
    return this.#proxies[Math.floor(this.#random() * this.#proxies.length) % this.#proxies.length]!;
  }
}

function stop(verdict: ReplyVerdict, reply: SmtpReply, tls: boolean, stage: SmtpStage): HostResult {
  // 'continue' cannot reach here (each caller goes on when it gets it); treat it as a host fault.
  if (verdict === 'next_host' || verdict === 'continue') {
    return { type: 'next', reason: 'failed', detail: `${stage}: ${reply.code} ${reply.message}`, reply, tls };
  }
  return { type: 'decided', kind: verdict, reply, catchAll: null, tls };
}

function failed(error: unknown, tls: boolean): HostResult {
  if (!(error instanceof SmtpConnectionError)) {
    // A bug or a command-line assertion: never guess a verdict from it.
    throw error;
  }
  switch (error.kind) {
    case 'refused':
    case 'unreachable':
      return { type: 'next', reason: 'refused', detail: error.message, reply: null, tls };
    case 'timeout':
      return { type: 'next', reason: 'timeout', detail: error.message, reply: null, tls };
    case 'tls':
      return { type: 'next', reason: 'tls', detail: error.message, reply: null, tls };
    case 'closed':
    case 'protocol':
    case 'proxy':
    case 'destroyed':
      return { type: 'next', reason: 'failed', detail: error.message, reply: null, tls };
  }
}

function evidence(
  host: string | null,
  reply: SmtpReply | null,
  detail: string | null,
  tls: boolean,
  startedAt: number,
): SmtpEvidence {
  return {
    host,
    code: reply?.code ?? null,
    enhancedCode: reply?.enhancedCode ?? null,
    message: detail ?? reply?.message ?? null,
    tls,
    durationMs: Math.round(performance.now() - startedAt),
  };
}

/** Uniform in [0, 1) from the operating system's CSPRNG, drawn 64 words at a time. */
function cryptoRandom(): () => number {
  const words = new Uint32Array(64);
  let index = words.length;
  return () => {
    if (index === words.length) {
      getRandomValues(words);
      index = 0;
    }
    return words[index++]! / 0x1_0000_0000;
  };
}
