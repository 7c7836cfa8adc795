/**
 * The single-address SMTP probe: asks the domain's mail hosts whether they would accept mail
 * for an address, without ever sending DATA, and (once per domain, then cached) whether they
 * accept a random improbable address too (catch-all).
 *
 * Hosts are tried in the order the resolver gives, up to `maxMxHosts`; a host that refuses the
 * connection, stays silent, drops the line or answers 421 hands over to the next. A host with
 * IPv4 and IPv6 addresses is connected to by Happy Eyeballs (../net/happy-eyeballs.ts): its
 * addresses are raced, and the session is the first that connected. The first
 * host that answers RCPT decides. `timeoutMs` bounds the whole probe: the connect and banner
 * of each host get a share of what remains (so a silent first MX cannot eat the budget of the
 * second), the dialogue after the banner may use all of it (session.ts, `budgetDeadlines`).
 *
 * A host that fails (at any stage, in any way: docs/batch-engine.md, "Liveness") is backed off
 * as in the batch engine: until its back-off ends, later probes do not connect to it but go to
 * the next MX, or end with its last failure as evidence. An answer about a recipient ends its
 * failure streak; a greeting alone does not.
 *
 * With several egresses (source addresses, SOCKS5 proxies: egress/egress.ts) probes take them in
 * turn, skipping one that rests for the host; back-off and rests are kept per (egress, host)
 * (sessions/single-lanes.ts), in the session broker's table when there is one, which the batches
 * of the process record into and consult too. A refusal of our address by policy rests that egress for that host
 * (`egressRestMs`) while there are others; the probe that got it still reports it.
 *
 * Sessions come from a pool (sessions/single-sessions.ts): with warm sessions on
 * (`smtp.sessions`), a session that answered stays open for the next probe to the same host
 * address and egress, which then sends RSET, MAIL FROM and RCPT TO in one round trip; the pool
 * also caps the sessions open per host and in all. A warm session the server let go is replaced
 * without failing the probe.
 *
 * An address whose local part is not ASCII is asked about only where the server offers SMTPUTF8
 * (smtputf8.ts). The first host that greets decides that too, as for a reply to RCPT: the probe
 * QUITs without MAIL FROM and does not try the next MX, because a sending MTA does not either
 * (Postfix bounces the message, 5.6.7 "SMTPUTF8 is required, but was not offered by host").
 */
import { getRandomValues } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { setMaxListeners } from 'node:events';
import { DEFAULT_HOST_BACKOFF_MAX_MS, DEFAULT_HOST_BACKOFF_MS } from './coordination.js';
import { LaneBackoff } from './sessions/lane-backoff.js';
import type { MailHost, SmtpEvidence, SmtpOutcome, SmtpOutcomeKind } from './outcome.js';
import { TtlMap } from './ttl-map.js';
import { DEFAULT_CONCURRENCY, DEFAULT_PER_HOST_CONCURRENCY, type SmtpOptions } from './types.js';
import { CatchAllCache } from './smtp/catch-all-cache.js';
import { HeldReplies } from './smtp/held-replies.js';
import type { Egress, EgressGate } from './egress/egress.js';
import { providerOfHost } from './smtp/providers.js';
import { DEFAULT_EGRESS_REST_MS, buildEgresses, pairKey } from './egress/egress.js';
import type { SmtpReply } from './smtp/reply.js';
import type { HostFailure, SmtpSession } from './smtp/session.js';
import { budgetDeadlines, connectionRefused, openSession } from './smtp/session.js';
import { addressNeedsSmtpUtf8, unicodeUnsupported } from './smtp/smtputf8.js';
import type { WireRecorder } from './smtp/transcript.js';
import type { HostResult, Transaction } from './smtp/probe-transaction.js';
import { queueTimeout, runTransaction, serverLetGo } from './smtp/probe-transaction.js';
import type { SessionBroker } from './sessions/broker.js';
import type { SharedSlots } from './sessions/single-sessions.js';
import { SingleSessions } from './sessions/single-sessions.js';
import type { Route } from './sessions/single-lanes.js';
import { SingleLanes } from './sessions/single-lanes.js';
import type { WarmEntry, WarmPoolStats } from './sessions/warm-pool.js';
import { WARM_DEFAULTS } from './sessions/warm-pool.js';
import {
  DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
  hasBothFamilies,
  interleaveFamilies,
} from './net/happy-eyeballs.js';

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
  /** The verification's transcript (transcript.ts), when it asked for one. */
  recorder?: WireRecorder | null;
}

export interface ProberDeps {
  /** Milliseconds since the epoch; drives the catch-all cache and the hosts' back-off. */
  clock?: () => number;
  /** In [0, 1); picks the catch-all local part and the proxy. Defaults to crypto randomness. */
  random?: () => number;
  /** The reputation guard (egress/egress-guard.ts): resting egresses are not taken. */
  guard?: EgressGate;
  /**
   * The process's session broker (sessions/broker.ts): the per-host and per-provider caps, the
   * lanes' back-off and the provider pace shared with its batches, and the idle sessions of both
   * kinds. Absent: they are this prober's own.
   */
  broker?: SessionBroker;
  /**
   * Session slots shared with other processes (Redis in the scale-out mode): every new session
   * also takes one of its lane's `perHostConcurrency` slots there (and one of its provider's), the
   * batch engines' semaphore, held for the session's life; a warm session reused costs no round
   * trip to it (sessions/single-sessions.ts). Absent: the caps are this process's.
   */
  sharedSlots?: SharedSlots;
}

/** Probe settings: the engine's SMTP options, the catch-all cache lifetime and the host back-off. */
export interface ProberOptions extends SmtpOptions {
  catchAllTtlMs: number;
  /** First back-off of a host after a failure, doubling per failure in a row (default 1 s). */
  hostBackoffMs?: number;
  /** Longest back-off (default 60 s). */
  hostBackoffMaxMs?: number;
  /** How long an egress refused by policy stays away from that host, when there are others (default 15 min). */
  egressRestMs?: number;
}

/** Another address of the host raced by Happy Eyeballs, with its route. */
interface Alternate {
  address: string;
  route: Route;
}

const LOCAL_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const LOCAL_LENGTH = 24;
/** How long the family that won a Happy Eyeballs race at a host goes first there. */
const FAMILY_MEMORY_MS = 10 * 60_000;
/** MX host names whose last race winner is remembered. */
const MAX_REMEMBERED_HOSTS = 10_000;

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

/** Probes addresses over SMTP; one instance serves many probes and caches catch-all answers. */
export class SmtpProber {
  readonly #options: ProberOptions;
  readonly #clock: () => number;
  readonly #random: () => number;
  readonly #guard: EgressGate | null;
  readonly #catchAll: CatchAllCache;
  /** Which egress each probe of a host address takes, and the lanes' back-off (sessions/single-lanes.ts). */
  readonly #lanes: SingleLanes;
  readonly #backoffMs: number;
  readonly #backoffMaxMs: number;
  /** Aborted by close(): destroys every connection, including those still connecting. */
  readonly #closing = new AbortController();
  /** Warm sessions, the caps on sessions and the shared slots (sessions/single-sessions.ts). */
  readonly #sessions: SingleSessions;
  /** Per MX host name: whether IPv6 goes first, after a race another family than the first won. */
  readonly #familyWon: TtlMap<string, boolean>;
  /** Hosts that hold their reply behind their TLS 1.3 session tickets (smtp/held-replies.ts). */
  readonly #heldReplies: HeldReplies;

  constructor(options: ProberOptions, deps: ProberDeps = {}) {
    this.#options = options;
    this.#clock = deps.clock ?? Date.now;
    this.#random = deps.random ?? cryptoRandom();
    this.#guard = deps.guard ?? null;
    this.#catchAll = new CatchAllCache(options.catchAllTtlMs, this.#clock);
    this.#backoffMs = options.hostBackoffMs ?? DEFAULT_HOST_BACKOFF_MS;
    this.#backoffMaxMs = options.hostBackoffMaxMs ?? DEFAULT_HOST_BACKOFF_MAX_MS;
    this.#familyWon = new TtlMap(MAX_REMEMBERED_HOSTS, this.#clock);
    // The broker's memory when there is one: the batch sessions of this process learn it too.
    this.#heldReplies = deps.broker?.heldReplies ?? new HeldReplies(this.#clock);
    this.#lanes = new SingleLanes(
      buildEgresses(options),
      {
        backoffMs: this.#backoffMs,
        backoffMaxMs: this.#backoffMaxMs,
        egressRestMs: options.egressRestMs ?? DEFAULT_EGRESS_REST_MS,
      },
      { clock: this.#clock, backoff: deps.broker?.backoff ?? new LaneBackoff(), guard: this.#guard },
    );
    // A library caller that does not ask for warm sessions gets none (QUIT after each probe, as a
    // one-off script wants); the service passes its settings (--smtp-session-idle...).
    const warm = options.sessions ?? { idleMs: 0 };
    this.#sessions = new SingleSessions(
      {
        concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
        perHostConcurrency: options.perHostConcurrency ?? DEFAULT_PER_HOST_CONCURRENCY,
        ...(options.providerConcurrency === undefined
          ? {}
          : { providerConcurrency: options.providerConcurrency }),
        ...(options.providerSessionsPerSecond === undefined
          ? {}
          : { providerSessionsPerSecond: options.providerSessionsPerSecond }),
        // Back-off is the lanes' (#lanes); the limiter only counts sessions here.
        backoffBaseMs: this.#backoffMs,
        backoffMaxMs: this.#backoffMaxMs,
      },
      { ...WARM_DEFAULTS, ...definedOnly(warm) },
      {
        clock: this.#clock,
        random: this.#random,
        ...(deps.broker === undefined ? {} : { broker: deps.broker }),
        ...(deps.sharedSlots === undefined ? {} : { sharedSlots: deps.sharedSlots }),
      },
    );
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
    let last: HostFailure | null = null;
    let lastHost: string | null = null;
    let timedOut = false;

    for (let i = 0; i < hosts.length && !this.#closing.signal.aborted; i++) {
      const host = hosts[i]!;
      // Both families: Happy Eyeballs (../net/happy-eyeballs.ts) races the addresses, IPv6 first.
      // A family whose DNS answer is still to come (RFC 8305 §3) joins the race when it comes.
      const late = host.lateAddresses ?? null;
      const race = hasBothFamilies(host.addresses) || late !== null;
      // The family that last won a race at this host goes first (RFC 8305 §4 allows history).
      const ipv6First = this.#familyWon.get(host.exchange) ?? this.#options.preferIpv4 !== true;
      const addresses = race ? interleaveFamilies(host.addresses, ipv6First) : host.addresses;
      for (let a = 0; a < addresses.length; a++) {
        const address = addresses[a]!;
        const now = performance.now();
        if (now >= deadlineAt) {
          timedOut = true;
          break;
        }
        lastHost = host.exchange;
        const route = this.#lanes.route(address);
        const resting = route.resting;
        if (resting !== null) {
          request.recorder?.record('out', `[skip ${host.exchange} (${address}): ${resting.detail}]`);
          // A refusal of the prober (blocked, or deferred at MAIL FROM) holds as it was given:
          // the first host that decides, decides, as when it answers.
          if ((resting.kind === 'blocked' || resting.kind === 'greylisted') && resting.reply !== null) {
            return {
              kind: resting.kind,
              catchAll: null,
              evidence: evidence(host.exchange, resting.reply, resting.detail, resting.tls, startedAt),
            };
          }
          last = resting;
          // As after a live failure: another address of the host only when this one was
          // unreachable, or when the host is raced (the next address leads the race then).
          if (race || connectionRefused(resting)) continue;
          break;
        }
        // Connect and banner get this host's share of what is left; the dialogue gets the rest.
        const greetingAt = now + (deadlineAt - now) / (hosts.length - i);
        // Raced only when connected to directly (through a SOCKS5 proxy, the proxy connects).
        const alternates =
          race && route.egress.proxy === null
            ? (await this.#alternates(addresses.slice(a + 1))).filter(
                (alt) => alt.route.egress.proxy === null,
              )
            : [];
        // Late addresses join the first connection's race only (the next lookups have them).
        const lateAlternates =
          a === 0 && late !== null && route.egress.proxy === null
            ? late.then(async (added) =>
                (await this.#alternates(added.filter((x) => !addresses.includes(x)))).filter(
                  (alt) => alt.route.egress.proxy === null,
                ),
              )
            : null;
        const result = await this.#ask(
          host,
          address,
          route,
          request,
          greetingAt,
          deadlineAt,
          alternates,
          lateAlternates,
        );
        const raced = alternates.length > 0 || lateAlternates !== null;
        if (raced && result.servedBy !== undefined && result.servedBy !== address)
          this.#familyWon.set(host.exchange, isIPv6(result.servedBy), FAMILY_MEMORY_MS);
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
        last = result.failure;
        if (last.kind === 'timeout') timedOut = true;
        // Every other address was in the race.
        if (raced) break;
        // Another address of the same host only helps when this one could not be reached.
        if (!connectionRefused(last)) break;
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
        : timedOut && last.kind !== 'timeout'
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
    this.#sessions.close();
    this.#closing.abort();
  }

  /** Sessions open, opened, reused and closed by the server (metrics). */
  sessionStats(): WarmPoolStats {
    return this.#sessions.stats();
  }

  /** One session with one address of `host`, and what it means for the host's back-off. */
  async #ask(
    host: MailHost,
    address: string,
    route: Route,
    request: ProbeRequest,
    greetingAt: number,
    deadlineAt: number,
    alternates: readonly Alternate[],
    lateAlternates: Promise<Alternate[]> | null,
  ): Promise<HostResult & { servedBy?: string }> {
    // The address that served: another one when it won the Happy Eyeballs race.
    const used: Alternate = { address, route };
    const result = await this.#session(
      host,
      used,
      request,
      greetingAt,
      deadlineAt,
      alternates,
      lateAlternates,
    );
    ({ address, route } = used);
    const served = { ...result, servedBy: address };
    const heard = result.type === 'failed' ? result.failure : result.type === 'decided' ? result : null;
    if (heard?.reply) this.#guard?.observe(route.egress, host.exchange, heard.stage, heard.reply);
    this.#lanes.learn(address, route.key, result);
    return served;
  }

  /**
   * A warm session of the route's lane when one is idle (RSET, MAIL, RCPT in one round trip),
   * else a new one within the caps, else the first of either that frees before the deadline. A
   * warm session the server closed meanwhile is replaced by the next, or a new one.
   */
  async #session(
    host: MailHost,
    used: Alternate,
    request: ProbeRequest,
    greetingAt: number,
    deadlineAt: number,
    alternates: readonly Alternate[],
    lateAlternates: Promise<Alternate[]> | null = null,
  ): Promise<HostResult> {
    const { address, route } = used;
    const greetingShare = greetingAt - performance.now();
    const group = providerGroup(route.egress, host.exchange);
    const lanes = [{ address, route }, ...alternates];
    for (;;) {
      // The first address until another one serves (a session replaced tries again from it).
      Object.assign(used, { address, route });
      const taken = await this.#sessions.take(
        { key: route.key, group },
        alternates.map((a) => a.route.key),
        deadlineAt,
        this.#closing.signal,
      );
      if (taken.kind === 'timeout') return queueTimeout(this.#closing.signal.aborted);
      if (taken.kind === 'warm') {
        Object.assign(used, lanes[taken.lane]);
        taken.entry.session.useDeadlines(budgetDeadlines(deadlineAt, deadlineAt));
        const result = await this.#use(taken.entry, request, true);
        if (result !== 'replaced') return result;
        continue;
      }
      const { permit } = taken;
      // Raced addresses: those whose lane has room (the cap holds for whichever wins).
      const raced = alternates.filter((a) => this.#sessions.laneHasRoom(a.route.key));
      // Late ones with room join the race (and, if one wins, its slot moves as for the others).
      const late = lateAlternates?.then((added) => {
        const room = added.filter((a) => this.#sessions.laneHasRoom(a.route.key));
        raced.push(...room);
        return room.map((a) => ({ address: a.address, localAddress: a.route.egress.localAddress }));
      });
      const openedAt = performance.now();
      const opened = await openSession(
        { exchange: host.exchange, address },
        {
          port: this.#options.port,
          heloName: route.egress.heloName,
          proxy: route.egress.proxy,
          localAddress: route.egress.localAddress,
          // Time spent waiting for a slot does not shorten the greeting's share.
          deadlines: budgetDeadlines(Math.min(deadlineAt, performance.now() + greetingShare), deadlineAt),
          signal: this.#closing.signal,
          starttls: this.#options.starttls ?? 'opportunistic',
          recorder: request.recorder ?? null,
          alternates: raced.map((a) => ({ address: a.address, localAddress: a.route.egress.localAddress })),
          ...(late === undefined ? {} : { lateAlternates: late }),
          attemptDelayMs: this.#options.connectAttemptDelayMs ?? DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
          heldReplies: this.#heldReplies,
          ...(this.#options.heldReplyMarginMs === undefined
            ? {}
            : { heldReplyMarginMs: this.#options.heldReplyMarginMs }),
        },
      );
      const greetMs = performance.now() - openedAt;
      // The slot taken for the first address goes with the address that connected.
      const connectedTo = opened.ok ? opened.session.target.address : (opened.connectedTo ?? address);
      const winner = raced.find((a) => a.address === connectedTo);
      if (winner !== undefined) Object.assign(used, winner);
      const entry = await this.#sessions.settle(
        permit,
        opened,
        winner === undefined
          ? null
          : { key: winner.route.key, group: providerGroup(winner.route.egress, host.exchange) },
        { address: used.address, egress: used.route.egress, greetMs },
      );
      if (!opened.ok) {
        const { failure } = opened;
        // The banner or EHLO refused the prober (5xx): decided, as a reply to RCPT would be.
        if (failure.kind === 'blocked' && failure.reply !== null) {
          return {
            type: 'decided',
            stage: failure.stage,
            kind: 'blocked',
            reply: failure.reply,
            catchAll: null,
            tls: failure.tls,
          };
        }
        return { type: 'failed', failure };
      }
      const result = await this.#use(entry!, request, false);
      // A new session is not "replaced": its failure is the host's.
      if (result !== 'replaced') return result;
    }
  }

  /**
   * One verification on a session; the session goes back to the pool once every reply of its
   * group is in (or is retired). `replaced`: a warm session the server had let go (it closed, or
   * answered 421 to RSET), retired; the caller tries another.
   */
  async #use(entry: WarmEntry, request: ProbeRequest, reused: boolean): Promise<HostResult | 'replaced'> {
    const { session } = entry;
    // Decided on the last greeting's extensions: after STARTTLS, the second EHLO's.
    const smtpUtf8 = addressNeedsSmtpUtf8(request.address);
    if (smtpUtf8 && !session.extensions.smtpUtf8) {
      this.#sessions.release(entry);
      return { type: 'unicode_unsupported', tls: session.tls };
    }
    // A session that has carried a transaction starts the next with RSET; one opened for a
    // verification that went elsewhere has none to reset.
    const reset = entry.verifications > 0;
    entry.verifications += 1;
    // The transcript is this verification's: a warm session records into it only while it serves
    // this request (transcript.ts), and says that it was reused.
    if (reused) {
      request.recorder?.record('out', `[reuse ${session.target.exchange} (${entry.address})]`);
      session.recorder = request.recorder ?? null;
    }
    let done: Transaction;
    try {
      done = await this.#transaction(session, request, smtpUtf8, reset);
    } catch (error) {
      // A programming error (a line with CR/LF: nothing was written); the session is not kept.
      this.#sessions.retire(entry);
      throw error;
    }
    const replaced = reused && serverLetGo(done.result, reset ? 'rset' : 'mail');
    // Only a session that answered about the recipient is kept; any failure or refusal of the
    // prober ends it (the host's back-off decides when it is asked again).
    const keep = !replaced && done.result.type === 'decided' && done.result.stage === 'rcpt';
    this.#sessions.settled(entry, done.settled, keep);
    if (replaced) return 'replaced';
    if (reused) this.#sessions.reusedOnce();
    return done.result;
  }

  /** The verification's transaction (probe-transaction.ts), with this prober's sender and catch-all cache. */
  async #transaction(
    session: SmtpSession,
    request: ProbeRequest,
    smtpUtf8: boolean,
    reset: boolean,
  ): Promise<Transaction> {
    const cached = this.#catchAll.get(request.domain) ?? null;
    return runTransaction(
      session,
      {
        reset,
        mailFrom: `MAIL FROM:<${this.#options.mailFrom}>${smtpUtf8 ? ' SMTPUTF8' : ''}`,
        rcpt: `RCPT TO:<${request.address}>`,
        probe: cached === null ? `RCPT TO:<${improbableLocalPart(this.#random)}@${request.domain}>` : null,
      },
      cached,
      (catchAll) => this.#catchAll.remember(request.domain, catchAll),
    );
  }

  /** Routes of the other addresses of a host for a Happy Eyeballs race (those resting stay out). */
  async #alternates(addresses: readonly string[]): Promise<Alternate[]> {
    const out: Alternate[] = [];
    for (const address of addresses) {
      const route = this.#lanes.route(address);
      if (route.resting === null) out.push({ address, route });
    }
    return out;
  }
}

/** The options the caller set (undefined ones keep their defaults). */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
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

/** The provider-wide group of a host through an egress (as the batch scheduler's lanes), or none. */
function providerGroup(egress: Egress, exchange: string): string | null {
  const provider = providerOfHost(exchange);
  return provider === null ? null : pairKey(egress, `provider:${provider}`);
}
