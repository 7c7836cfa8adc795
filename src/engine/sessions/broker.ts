/**
 * The session broker: one per process, asked by both kinds of request for an SMTP session to a
 * lane (one mail host address through one egress, `pairKey`): a single verification (a person
 * waiting, one or two recipients, a deadline: ../probe.ts through single-sessions.ts) and a batch
 * group (many recipients, paced: ../batch/scheduler.ts and ../batch/pooled-session.ts).
 *
 * It owns what the two kinds share:
 *
 * - The per-host cap (`--per-host-concurrency`) and the per-provider cap (`--provider-concurrency`)
 *   across both kinds: every connection is counted here once, under the kind that opened it, for
 *   its whole life (until the server no longer counts it). Each kind's own bookkeeping (its global
 *   cap, pace, back-off, its Redis slots: host-limiter.ts, shared-politeness.ts) asks here before
 *   it opens one (`canOpen`), so that together they never open more to a host than the cap allows.
 * - Priority: a single verification goes first. While one waits for a host (or its provider),
 *   batches open nothing there that would take the slot it waits for; a batch never holds the
 *   last slot of a cap of two or more (a batch session carries hundreds of recipients for seconds),
 *   and neither do single verifications (each kind keeps one slot of its own). With a cap of 1
 *   the two take turns, single verifications first.
 * - The idle sessions of both kinds, per lane (`park`, `takeIdle`). A session opened for one kind
 *   serves the other: a batch session with no work left for its host waits here, and the next
 *   single verification to that lane uses it (one round trip instead of four to seven), or the
 *   batch itself when work for the host comes back. Nothing is handed over: the connection stays
 *   counted where it was opened, its Redis slots stay held (and renewed) by its opener until the
 *   server lets it go, and its opener decides when it retires.
 * - The memory of the hosts that hold their EHLO reply behind their TLS 1.3 session tickets
 *   (`heldReplies`, ../smtp/held-replies.ts): a session of either kind learns it and the next
 *   one of either kind waits for the first ticket there.
 * - The back-off of each lane (`backoff`, lane-backoff.ts): failures in a row, the end of the
 *   back-off and the last failure, recorded and consulted by both kinds, each failure with its
 *   kind's back-off settings (the longer back-off holds). With Redis, the shared health below
 *   stays the source across processes; this table is what the process itself learnt.
 * - The pace of new sessions per provider group (`pace`, provider-pace.ts): every session either
 *   kind opens to a provider's hosts counts; only batches wait for `--provider-session-rate`
 *   (a single verification is a person waiting and goes first), so batches slow down while
 *   single verifications open sessions there.
 * - What the process knows of each coordination's (Redis) slots and health (`sharedLanes`,
 *   shared-politeness.ts): one read of a lane's shared health, one retry wait and one view of its
 *   back-off for both kinds; each caller's `SharedPoliteness` keeps its settings and callbacks.
 */
import type { EngineCoordination } from '../coordination.js';
import type { Egress } from '../egress/egress.js';
import { HeldReplies } from '../smtp/held-replies.js';
import type { SmtpSession } from '../smtp/session.js';
import { LaneBackoff } from './lane-backoff.js';
import { ProviderPace } from './provider-pace.js';
import { SharedLaneState } from './shared-politeness.js';

/** Who asks for a session: a single verification or a batch group. */
export type RequestKind = 'single' | 'batch';

export interface SessionBrokerOptions {
  perHostConcurrency: number;
  /** Sessions to one provider's hosts through one egress, both kinds together; default no cap. */
  providerConcurrency?: number;
  /** Epoch ms (how long a host is remembered as holding its reply); default `Date.now`. */
  now?: () => number;
}

/**
 * An open connection with no transaction in progress, kept in the broker's idle sessions. Its
 * opener keeps its bookkeeping: `retire` is the opener's way to end it (QUIT), `usable` whether it
 * may still carry a transaction (the connection is up, the opener's shared slot is not lost).
 */
export interface IdleSession {
  /** The lane: (egress, host address) as `pairKey` writes it. */
  readonly key: string;
  readonly group: string | null;
  /** The host address the connection reached. */
  readonly address: string;
  readonly egress: Egress;
  readonly session: SmtpSession;
  /** The kind whose request opened it. */
  readonly openedBy: RequestKind;
  /** `performance.now()` when it opened. */
  readonly openedAt: number;
  /** How long its connection and greeting took (ms). */
  readonly greetMs: number;
  /** Transactions it carried (a batch group counts as one). */
  verifications: number;
  /** Refused commands so far (Postfix's error limits: a session is retired before them). */
  rejects: number;
  /** Whether it may carry another transaction. */
  usable(): boolean;
  /** Ends it (QUIT): it stayed idle too long, or the broker closes its opener's sessions. */
  retire(): void;
  /** A request of kind `by` took it from the idle sessions. */
  taken(by: RequestKind): void;
}

/** The single verifications' terms for idle sessions (their warm sessions' settings). */
export interface IdleTerms {
  /** How long an unused session stays open; 0: none kept. */
  idleMs: number;
  /** Oldest a session may be before it is retired. */
  maxAgeMs: number;
  /** Transactions one session carries at most. */
  maxVerifications: number;
  maxRejects: number;
}

interface Count {
  single: number;
  batch: number;
  /** Single verifications waiting for a slot here. */
  waiting: number;
}

interface Parked {
  idle: IdleSession;
  timer: NodeJS.Timeout | null;
}

export class SessionBroker {
  readonly #perHost: number;
  readonly #perGroup: number;
  readonly #hosts = new Map<string, Count>();
  readonly #groups = new Map<string, Count>();
  readonly #listeners = new Set<{ as: RequestKind; call: () => void }>();
  readonly #idleListeners = new Set<(idle: IdleSession) => void>();
  /** Batch sessions kept idle for the single verifications so far (metrics). */
  #batchesKeptIdle = 0;
  /** Idle sessions per lane key, most recently used last. */
  readonly #idle = new Map<string, Parked[]>();
  /** The single verifications' terms, while a single prober is attached (`serveSingles`). */
  #terms: IdleTerms | null = null;
  /** When a single verification last asked for a session (`performance.now()`). */
  #lastSingleAt = -Infinity;
  /**
   * The hosts that hold their reply behind their TLS 1.3 session tickets, for every session this
   * process opens, single or batch: what one session saw spares the next a delayed acknowledgement.
   */
  readonly heldReplies: HeldReplies;
  /**
   * The lanes' back-off for both kinds (lane-backoff.ts): a lane that failed for a batch is not
   * asked by the single verifications before its back-off ends, and the other way round; their
   * failures make one streak, which the batches' `maxHostFailures` counts.
   */
  readonly backoff = new LaneBackoff();
  /**
   * The sessions opened to each provider group in the last second, by both kinds
   * (provider-pace.ts): batches wait for `--provider-session-rate`, single verifications do not.
   */
  readonly pace = new ProviderPace();
  /** What the process knows of the shared slots and health, per coordination (`sharedLanes`). */
  readonly #sharedLanes = new WeakMap<EngineCoordination, SharedLaneState>();

  constructor(options: SessionBrokerOptions) {
    this.#perHost = options.perHostConcurrency;
    this.#perGroup = options.providerConcurrency ?? Infinity;
    this.heldReplies = new HeldReplies(options.now ?? Date.now);
  }

  /**
   * What this process's callers of `coordination` (Redis) know together of its slots and health:
   * the batch engines' and the single verifications' `SharedPoliteness` are built over it.
   */
  sharedLanes(coordination: EngineCoordination): SharedLaneState {
    let state = this.#sharedLanes.get(coordination);
    if (state === undefined) {
      state = new SharedLaneState();
      this.#sharedLanes.set(coordination, state);
    }
    return state;
  }

  /** Whether a new session of kind `as` to lane `key` (of provider group `group`) fits the caps. */
  canOpen(as: RequestKind, key: string, group: string | null): boolean {
    if (!fits(as, this.#hosts.get(key), this.#perHost)) return false;
    return group === null || fits(as, this.#groups.get(group), this.#perGroup);
  }

  /** Counts a connection (or a reservation for one) opened by kind `as`; the caller checked `canOpen`. */
  take(as: RequestKind, key: string, group: string | null): void {
    count(this.#hosts, key)[as] += 1;
    if (group !== null) count(this.#groups, group)[as] += 1;
  }

  /** The connection ended (the server let it go): its slot is free for either kind. */
  give(as: RequestKind, key: string, group: string | null): void {
    uncount(this.#hosts, key, as);
    if (group !== null) uncount(this.#groups, group, as);
    for (const listener of this.#listeners) listener.call();
  }

  /** A single verification waits for a slot of lane `key`: batches leave it the next one. Returns its end. */
  wait(key: string, group: string | null): () => void {
    count(this.#hosts, key).waiting += 1;
    if (group !== null) count(this.#groups, group).waiting += 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      uncount(this.#hosts, key, 'waiting');
      if (group !== null) uncount(this.#groups, group, 'waiting');
      // A batch held back for it may open now.
      for (const listener of this.#listeners) if (listener.as === 'batch') listener.call();
    };
  }

  /** Connections of each kind open to lane `key` now (tests, metrics). */
  openTo(key: string): { single: number; batch: number } {
    const c = this.#hosts.get(key);
    return { single: c?.single ?? 0, batch: c?.batch ?? 0 };
  }

  /**
   * Calls `listener` whenever a slot frees for kind `as` (a batch's also when a single
   * verification stops waiting); returns the unsubscription.
   */
  onFree(as: RequestKind, listener: () => void): () => void {
    const entry = { as, call: listener };
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  /** Calls `listener` whenever a session joins the idle ones; returns the unsubscription. */
  onIdle(listener: (idle: IdleSession) => void): () => void {
    this.#idleListeners.add(listener);
    return () => this.#idleListeners.delete(listener);
  }

  /** What the broker did so far (metrics). */
  stats(): { batchesKeptIdle: number } {
    return { batchesKeptIdle: this.#batchesKeptIdle };
  }

  /**
   * The single verifications of this process keep idle sessions on `terms` (their warm sessions'
   * settings); returns the end of it. Without, a batch session with no work left is not kept.
   */
  serveSingles(terms: IdleTerms): () => void {
    this.#terms = terms;
    return () => {
      if (this.#terms === terms) this.#terms = null;
    };
  }

  /** A single verification asks for a session (a batch's idle one is kept only where they are asked). */
  singleAsked(): void {
    this.#lastSingleAt = performance.now();
  }

  /**
   * Whether a batch session with no work left on lane `key` is worth keeping idle for the single
   * verifications: they keep idle sessions, were asked for one lately (a worker process that
   * verifies no single address keeps none), the lane has no idle one yet, and the session can
   * carry more.
   */
  wantsIdle(key: string, rejects: number): boolean {
    const terms = this.#terms;
    if (terms === null || terms.idleMs <= 0 || rejects >= terms.maxRejects) return false;
    if (performance.now() - this.#lastSingleAt > terms.maxAgeMs) return false;
    return !this.#idle.has(key);
  }

  /**
   * Keeps `idle` among the idle sessions of its lane for `idleMs` at most (then it retires), or
   * retires it at once when it cannot carry more. Wakes whoever waits for an idle session.
   */
  park(idle: IdleSession, idleMs: number): void {
    if (!idle.usable()) {
      idle.retire();
      return;
    }
    idle.session.idle();
    const parked: Parked = { idle, timer: null };
    parked.timer = setTimeout(() => {
      this.#remove(parked);
      idle.retire();
    }, idleMs);
    parked.timer.unref?.();
    const list = this.#idle.get(idle.key) ?? [];
    list.push(parked);
    this.#idle.set(idle.key, list);
    for (const listener of this.#idleListeners) listener(idle);
  }

  /**
   * A batch session with no work left for its host, kept idle for the single verifications on
   * their terms (`wantsIdle` said yes): `park` with their idle time.
   */
  keepForSingles(idle: IdleSession): void {
    this.#batchesKeptIdle += 1;
    this.park(idle, this.#terms?.idleMs ?? 0);
  }

  /**
   * A session a request of the other kind used goes back among the idle sessions on the single
   * verifications' terms, or retires when they keep none or it is past their bounds.
   */
  giveBack(idle: IdleSession): void {
    const terms = this.#terms;
    if (
      terms === null ||
      terms.idleMs <= 0 ||
      idle.rejects >= terms.maxRejects ||
      idle.verifications >= terms.maxVerifications ||
      performance.now() - idle.openedAt + terms.idleMs > terms.maxAgeMs
    ) {
      idle.retire();
      return;
    }
    this.park(idle, terms.idleMs);
  }

  /**
   * The most recently used idle session of lane `key` that is still usable, taken by kind `by`
   * (out of the idle sessions from now on); `only`, when given, picks among them. Null: none.
   */
  takeIdle(key: string, by: RequestKind, only?: (idle: IdleSession) => boolean): IdleSession | null {
    if (by === 'single') this.singleAsked();
    const list = this.#idle.get(key);
    if (list === undefined) return null;
    for (let i = list.length - 1; i >= 0; i--) {
      const parked = list[i]!;
      if (only !== undefined && !only(parked.idle)) continue;
      this.#remove(parked);
      if (!parked.idle.usable()) {
        parked.idle.retire();
        continue;
      }
      parked.idle.taken(by);
      return parked.idle;
    }
    return null;
  }

  /** Takes `idle` out of the idle sessions (it retires, or its opener takes it back); false when it was not there. */
  remove(idle: IdleSession): boolean {
    const parked = this.#idle.get(idle.key)?.find((p) => p.idle === idle);
    if (parked === undefined) return false;
    this.#remove(parked);
    return true;
  }

  /** The idle sessions for which `which` is true. */
  idleSessions(which: (idle: IdleSession) => boolean): IdleSession[] {
    const out: IdleSession[] = [];
    for (const list of this.#idle.values()) for (const { idle } of list) if (which(idle)) out.push(idle);
    return out;
  }

  /** Whether lane `key` has an idle session. */
  hasIdle(key: string): boolean {
    return this.#idle.has(key);
  }

  /** The longest idle session of provider group `group` on another lane than `key`, if any. */
  oldestIdleOf(group: string, key: string): IdleSession | null {
    let oldest: IdleSession | null = null;
    for (const [lane, list] of this.#idle) {
      if (lane === key) continue;
      for (const { idle } of list)
        if (idle.group === group && (oldest === null || idle.openedAt < oldest.openedAt)) oldest = idle;
    }
    return oldest;
  }

  /** Retires every idle session for which `which` is true (its opener closes). */
  retireIdle(which: (idle: IdleSession) => boolean): void {
    for (const list of [...this.#idle.values()])
      for (const parked of [...list])
        if (which(parked.idle)) {
          this.#remove(parked);
          parked.idle.retire();
        }
  }

  #remove(parked: Parked): void {
    if (parked.timer !== null) clearTimeout(parked.timer);
    parked.timer = null;
    const list = this.#idle.get(parked.idle.key);
    if (list === undefined) return;
    const index = list.indexOf(parked);
    if (index !== -1) list.splice(index, 1);
    if (list.length === 0) this.#idle.delete(parked.idle.key);
  }
}

function fits(as: RequestKind, c: Count | undefined, cap: number): boolean {
  if (c === undefined) return cap > 0;
  const total = c.single + c.batch;
  if (total >= cap) return false;
  // Each kind leaves the other one slot of a cap of two or more.
  if (cap >= 2 && c[as] >= cap - 1) return false;
  // Batches leave free slots to the single verifications waiting for them.
  return as === 'single' || total + c.waiting < cap;
}

function count(map: Map<string, Count>, key: string): Count {
  let c = map.get(key);
  if (c === undefined) {
    c = { single: 0, batch: 0, waiting: 0 };
    map.set(key, c);
  }
  return c;
}

function uncount(map: Map<string, Count>, key: string, field: keyof Count): void {
  const c = map.get(key);
  if (c === undefined) return;
  c[field] = Math.max(0, c[field] - 1);
  if (c.single === 0 && c.batch === 0 && c.waiting === 0) map.delete(key);
}
