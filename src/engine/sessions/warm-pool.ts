/**
 * Warm sessions for single verifications: after a probe, its SMTP session stays open for a short
 * idle time among the session broker's idle sessions (broker.ts), and the next probe to the same
 * MX host address (through the same egress) sends RSET, MAIL FROM and RCPT TO on it in one round
 * trip (pipelined) instead of connecting and greeting again (4 round trips, 7 with STARTTLS); an
 * idle session a batch left there (no work left for its host) serves it the same way. docs/batch-engine.md, "Warm sessions", gives the
 * defaults and why they stay within what servers tolerate.
 *
 * Sessions are counted per lane (egress, host address) in a HostLimiter, the batch scheduler's
 * class, with the per-host cap of batches (`--per-host-concurrency`) and a global cap: a probe
 * takes an idle session, else opens one while the caps allow, else waits until one comes back or
 * a slot frees, up to its own deadline. A slot is held until the server no longer counts the
 * connection (its close after our QUIT, or its own close).
 *
 * A session is retired (QUIT) after `idleMs` unused, at `maxAgeMs` of age, after
 * `maxVerifications` verifications, after `maxRejects` refused commands (Postfix's error limits),
 * or when the server closed it (counted in `closedByServer`; the probe that meets such a session
 * opens a fresh one without failing).
 */
import type { HostLimiter } from './host-limiter.js';
import type { Egress } from '../egress/egress.js';
import type { SessionPoolStats } from '../types.js';
import type { SmtpSession } from '../smtp/session.js';
import type { IdleSession, SessionBroker } from './broker.js';
import { stepDeadlines } from '../smtp/session.js';

export interface WarmSessionOptions {
  /** How long an unused session stays open; 0: no warm sessions (QUIT after each probe). */
  idleMs: number;
  /** Oldest a session may be before it is retired. */
  maxAgeMs: number;
  /** Verifications (MAIL transactions) one session carries at most. */
  maxVerifications: number;
  /** Refused commands (non-2xx RCPT or MAIL replies) after which a session is retired. */
  maxRejects: number;
}

/**
 * Refused commands a session takes: one under Postfix's `smtpd_soft_error_limit` (10, it then
 * slows down; `smtpd_hard_error_limit` 20 disconnects). The batch sessions use the same bound.
 */
export const MAX_REJECTS_PER_SESSION = 9;

/** Defaults; docs/batch-engine.md ("Warm sessions") gives the reasons. */
export const WARM_DEFAULTS: WarmSessionOptions = {
  // Under Postfix's smtpd_timeout (300 s; 10 s when Postfix is under stress).
  idleMs: 8_000,
  // A session open for minutes looks like a harvester; a minute of signups is plenty.
  maxAgeMs: 60_000,
  // One transaction each: far under Exim's smtp_accept_max_per_connection (1000).
  maxVerifications: 100,
  maxRejects: MAX_REJECTS_PER_SESSION,
};

/**
 * A session a single verification uses: one this pool opened, or an idle one of the broker that a
 * batch opened (its opener keeps its counts and its shared slots; `retire` is the opener's).
 */
export type WarmEntry = IdleSession;

export type WarmPoolStats = SessionPoolStats;

/** How long a QUIT of a retired session waits for the server's close (the slot is held until then). */
const QUIT_WAIT_MS = 5_000;

interface Waiter {
  key: string;
  wake: () => void;
}

/** A verification opening a new session that takes a busy one instead if it comes back first. */
interface Handoff {
  key: string;
  give: (entry: WarmEntry | null) => void;
}

export class WarmPool {
  readonly #options: WarmSessionOptions;
  readonly #limiter: HostLimiter;
  /** Where idle sessions wait, this pool's and the batches' (broker.ts). */
  readonly #broker: SessionBroker;
  /** Each lane's provider group (a lane is one host address through one egress: one provider). */
  readonly #groupOf = new Map<string, string>();
  /** The sessions this pool opened and that are still open. */
  readonly #mine = new Set<WarmEntry>();
  /** Those of them that the pool QUIT (anything else that ends one is the server's doing). */
  readonly #retired = new WeakSet<WarmEntry>();
  readonly #openByHost = new Map<string, number>();
  #waiters: Waiter[] = [];
  #handoffs: Handoff[] = [];
  /** Sessions in use per lane key. */
  readonly #busy = new Map<string, number>();
  readonly #inUse = new Set<WarmEntry>();
  #opened = 0;
  #reused = 0;
  #closedByServer = 0;
  #closed = false;

  readonly #unsubscribe: () => void;
  readonly #unwatchIdle: () => void;

  constructor(options: WarmSessionOptions, limiter: HostLimiter, broker: SessionBroker) {
    this.#options = options;
    this.#limiter = limiter;
    this.#broker = broker;
    // A batch session that ended (caps shared through the broker) frees a slot too.
    this.#unsubscribe = limiter.onSharedFree(() => this.#wake(null));
    // A session that went idle: its own lane's waiters first; without any, those of its
    // provider's other hosts, for whom it may give way (acquire's #yieldIdle).
    this.#unwatchIdle = broker.onIdle((idle) => {
      if (!this.#wake(idle.key) && idle.group !== null) this.#wake(null);
    });
  }

  /**
   * An idle session of lane `key` (marked in use), or `open` (a slot is taken: the caller opens a
   * session and hands it to `opened`, or its failure to `openFailed`), or `timeout` when neither
   * came before `deadlineAt` (a `performance.now()` instant) or the pool closed.
   */
  async acquire(
    key: string,
    deadlineAt: number,
    /** The host's provider group (HostLimiter's groups): its cap and pace hold too. */
    group: string | null = null,
  ): Promise<WarmEntry | 'open' | 'timeout'> {
    if (group !== null) this.#groupOf.set(key, group);
    this.#broker.singleAsked();
    for (;;) {
      if (this.#closed) return 'timeout';
      const entry = this.#broker.takeIdle(key, 'single');
      if (entry !== null) return this.#taken(entry);
      if (this.#limiter.canOpen(key, group)) {
        this.#limiter.acquire(key, group);
        return 'open';
      }
      // The host has room but its provider has none: an idle session to another of the
      // provider's hosts gives way (its slot frees once the server lets it go), or idle sessions
      // would hold the provider's slots until their idle time ends.
      if (group !== null && this.#limiter.canOpen(key)) this.#yieldIdle(key, group);
      const left = deadlineAt - performance.now();
      if (left <= 0) return 'timeout';
      // While it waits, batches sharing the caps leave it the next slot.
      const waited = this.#limiter.waitFor(key, group);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const waiter: Waiter = { key, wake: done };
        this.#waiters.push(waiter);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
      });
      waited();
    }
  }

  /** A session opened on the slot `acquire` gave: counted until the server lets it go. */
  opened(key: string, address: string, egress: Egress, session: SmtpSession, greetMs: number): WarmEntry {
    this.#opened += 1;
    const group = this.#groupOf.get(key) ?? null;
    const entry: WarmEntry = {
      session,
      key,
      group,
      address,
      egress,
      openedBy: 'single',
      greetMs,
      openedAt: performance.now(),
      verifications: 0,
      rejects: 0,
      usable: () => session.usable,
      retire: () => this.#quit(entry),
      taken: () => undefined,
    };
    this.#mine.add(entry);
    this.#openByHost.set(address, (this.#openByHost.get(address) ?? 0) + 1);
    this.#taken(entry);
    void session.closed.then(() => {
      this.#mine.delete(entry);
      this.#broker.remove(entry);
      if (!this.#retired.has(entry)) this.#closedByServer += 1;
      const left = (this.#openByHost.get(address) ?? 1) - 1;
      if (left <= 0) this.#openByHost.delete(address);
      else this.#openByHost.set(address, left);
      this.#freeSlot(key);
    });
    return entry;
  }

  /** The open failed: its slot frees once the server no longer counts the attempt. */
  openFailed(key: string, closed: Promise<void>): void {
    void closed.then(() => this.#freeSlot(key));
  }

  /** A warm session taken from the pool carried a verification (metrics: the reuse ratio). */
  reusedOnce(): void {
    this.#reused += 1;
  }

  /** Sessions of lane `key` in use now. */
  busy(key: string): number {
    return this.#busy.get(key) ?? 0;
  }

  /**
   * While a session of lane `key` is in use (warm sessions on): how long it is worth waiting for
   * it rather than opening a new one, the time a new one took to greet there. Null: none in use.
   */
  expectedFreeMs(key: string): number | null {
    if (this.#options.idleMs <= 0 || this.busy(key) === 0) return null;
    let greetMs = 0;
    for (const entry of this.#inUse) if (entry.key === key) greetMs = Math.max(greetMs, entry.greetMs);
    return greetMs;
  }

  /** An idle session of lane `key` (marked in use), or null; nothing is opened or awaited. */
  takeIdle(key: string): WarmEntry | null {
    if (this.#closed) return null;
    const entry = this.#broker.takeIdle(key, 'single');
    return entry === null ? null : this.#taken(entry);
  }

  /** Whether lane `key` has room for one more session under its per-host cap (the global one aside). */
  laneHasRoom(key: string): boolean {
    return this.#limiter.hostHasRoom(key);
  }

  /**
   * The slot `acquire` gave for lane `from` goes to lane `to` (of provider group `group`): Happy
   * Eyeballs connected to another address of the host than the one asked for.
   */
  moveSlot(from: string, to: string, group: string | null): void {
    if (from === to) return;
    if (group !== null) this.#groupOf.set(to, group);
    this.#limiter.acquire(to, group);
    this.#freeSlot(from);
  }

  /** A slot `acquire` gave back unused (a session in use came back first). */
  giveBack(key: string): void {
    this.#freeSlot(key);
  }

  /**
   * The first session of lane `key` that comes back from its verification, before `deadlineAt`;
   * null at the deadline or once cancelled ("wait for a busy one or open another, whichever is
   * sooner": a new one would take about as long as the busy one's greeting took).
   */
  handoff(key: string, deadlineAt: number): { entry: Promise<WarmEntry | null>; cancel: () => void } {
    let handoff: Handoff | null = null;
    const entry = new Promise<WarmEntry | null>((resolve) => {
      const timer = setTimeout(() => cancel(), Math.max(0, deadlineAt - performance.now()));
      handoff = {
        key,
        give: (given) => {
          clearTimeout(timer);
          resolve(given);
        },
      };
      this.#handoffs.push(handoff);
    });
    const cancel = (): void => {
      if (handoff === null || !this.#handoffs.includes(handoff)) return;
      this.#handoffs = this.#handoffs.filter((h) => h !== handoff);
      handoff.give(null);
    };
    return { entry, cancel };
  }

  /**
   * The session is done with a verification: to the verification waiting for it, else to the
   * broker's idle sessions, or retired when a bound is reached.
   */
  release(entry: WarmEntry): void {
    this.#untaken(entry);
    const o = this.#options;
    if (
      this.#closed ||
      o.idleMs <= 0 ||
      !entry.usable() ||
      entry.verifications >= o.maxVerifications ||
      entry.rejects >= o.maxRejects ||
      performance.now() - entry.openedAt + o.idleMs > o.maxAgeMs
    ) {
      this.retire(entry);
      return;
    }
    const handoff = this.#handoffs.find((h) => h.key === entry.key);
    if (handoff !== undefined) {
      this.#handoffs = this.#handoffs.filter((h) => h !== handoff);
      handoff.give(this.#taken(entry));
      return;
    }
    this.#broker.park(entry, o.idleMs);
  }

  /** QUIT (the slot frees on the server's close); a session already ended just leaves the pool. */
  retire(entry: WarmEntry): void {
    this.#untaken(entry);
    this.#broker.remove(entry);
    // A batch's session is ended by the batch (its counts and slots are its own).
    if (entry.openedBy === 'single') this.#quit(entry);
    else entry.retire();
  }

  stats(): WarmPoolStats {
    // The batches' sessions that serve single verifications (idle in the broker, or in use by
    // one) are open to them too.
    const openByHost = new Map(this.#openByHost);
    const batches = this.#broker.idleSessions((idle) => idle.openedBy === 'batch');
    for (const entry of this.#inUse) if (entry.openedBy === 'batch') batches.push(entry);
    for (const { address } of batches) openByHost.set(address, (openByHost.get(address) ?? 0) + 1);
    return {
      openByHost,
      opened: this.#opened,
      adopted: this.#broker.stats().batchesKeptIdle,
      reused: this.#reused,
      closedByServer: this.#closedByServer,
    };
  }

  /** Retires every idle session of this pool; waiting probes end as timed out. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    this.#unwatchIdle();
    this.#broker.retireIdle((idle) => this.#mine.has(idle));
    for (const waiter of this.#waiters) waiter.wake();
    this.#waiters = [];
    for (const handoff of this.#handoffs) handoff.give(null);
    this.#handoffs = [];
  }

  /** QUITs a session this pool opened (its slot frees on the server's close). */
  #quit(entry: WarmEntry): void {
    this.#untaken(entry);
    this.#broker.remove(entry);
    if (!entry.session.usable) return;
    this.#retired.add(entry);
    entry.session.useDeadlines(stepDeadlines(QUIT_WAIT_MS));
    void entry.session.quit();
  }

  #taken(entry: WarmEntry): WarmEntry {
    this.#inUse.add(entry);
    this.#busy.set(entry.key, (this.#busy.get(entry.key) ?? 0) + 1);
    return entry;
  }

  #untaken(entry: WarmEntry): void {
    if (!this.#inUse.delete(entry)) return;
    const left = (this.#busy.get(entry.key) ?? 1) - 1;
    if (left <= 0) this.#busy.delete(entry.key);
    else this.#busy.set(entry.key, left);
  }

  /** Retires the longest idle session of `group` on another lane than `key`, if there is one. */
  #yieldIdle(key: string, group: string): void {
    const oldest = this.#broker.oldestIdleOf(group, key);
    if (oldest !== null) this.retire(oldest);
  }

  #freeSlot(key: string): void {
    this.#limiter.release(key, this.#groupOf.get(key) ?? null);
    // A global slot freed: any waiter may now open.
    this.#wake(null);
  }

  /** Wakes the waiters of `key` (all of them when null), each to look again; whether any was woken. */
  #wake(key: string | null): boolean {
    const woken = this.#waiters.filter((w) => key === null || w.key === key);
    if (woken.length === 0) return false;
    this.#waiters = this.#waiters.filter((w) => !woken.includes(w));
    for (const waiter of woken) waiter.wake();
    return true;
  }
}
