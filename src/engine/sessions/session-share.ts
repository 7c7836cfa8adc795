/**
 * One process's single verifications (warm-pool.ts) and batches (../batch/scheduler.ts) under one
 * per-host cap (`--per-host-concurrency`) and one per-provider cap (`--provider-concurrency`):
 * each keeps its own HostLimiter (its global cap, back-off and pace), and both limiters count
 * their sessions here too, so that together they never open more to a host than the cap allows
 * (before, each had the whole cap: twice the cap to a host from one process).
 *
 * Neither starves the other. A single verification is a person waiting, so it goes first: while
 * one waits for a host (or its provider), batches open nothing there that would take the slot it
 * waits for. A batch session carries hundreds of recipients for seconds, so batches never hold
 * the last slot of a cap of two or more: a single verification always finds one within its
 * timeout. Single verifications never hold the last one either (their idle warm sessions would
 * otherwise keep a batch out for their idle time): each side keeps at least one slot of its own.
 * With a cap of 1 the two take turns, single verifications first.
 *
 * A batch session whose host has no work left is handed to the single verifications' warm pool
 * (`offer`) instead of being closed, when that pool keeps warm sessions and has been asked for
 * one in the last minute (a worker process that verifies no single address keeps none): the
 * envelope is the same
 * (one MAIL FROM, the lane's egress and HELO name), and the next single verification to the host
 * then costs one round trip. The server sees one connection go on; its slot moves from the batch
 * class to the single class, and with slots shared across processes (Redis) its slot there moves
 * with it (`takeSlots`), still renewed, until the server lets the connection go.
 */
import type { Egress } from '../egress/egress.js';
import type { SmtpSession } from '../smtp/session.js';
import type { SlotHolding } from './shared-politeness.js';

/** Who opens a session: a single verification or a batch. */
export type SessionClass = 'single' | 'batch';

export interface SessionShareOptions {
  perHostConcurrency: number;
  /** Sessions to one provider's hosts through one egress; default no cap. */
  groupConcurrency?: number;
}

/** A batch session handed over, idle, to the single verifications' warm pool. */
export interface SessionOffer {
  /** The lane: (egress, host address) as `pairKey` writes it. */
  key: string;
  group: string | null;
  address: string;
  egress: Egress;
  session: SmtpSession;
  /** Refused commands the session has had (the warm pool's reject budget goes on from there). */
  rejects: number;
  /**
   * Takes over the session's shared (Redis) slots, their renewal included: the taker gives them
   * back once the server has let the connection go. Null when the session holds none.
   */
  takeSlots: (() => SlotHolding) | null;
}

interface Count {
  single: number;
  batch: number;
  /** Single verifications waiting for a slot here. */
  waiting: number;
}

export class SessionShare {
  readonly #perHost: number;
  readonly #perGroup: number;
  readonly #hosts = new Map<string, Count>();
  readonly #groups = new Map<string, Count>();
  readonly #listeners = new Set<{ as: SessionClass; call: () => void }>();
  #adopt: ((offer: SessionOffer) => boolean) | null = null;

  constructor(options: SessionShareOptions) {
    this.#perHost = options.perHostConcurrency;
    this.#perGroup = options.groupConcurrency ?? Infinity;
  }

  /** Whether a session of class `as` to `host` (of provider group `group`) fits the shared caps. */
  canOpen(as: SessionClass, host: string, group: string | null): boolean {
    if (!fits(as, this.#hosts.get(host), this.#perHost)) return false;
    return group === null || fits(as, this.#groups.get(group), this.#perGroup);
  }

  /** Counts a session (or a reservation) of class `as`; the caller checked `canOpen`. */
  take(as: SessionClass, host: string, group: string | null): void {
    count(this.#hosts, host)[as] += 1;
    if (group !== null) count(this.#groups, group)[as] += 1;
  }

  /** The session ended (the server let it go): its slot is free for either class. */
  give(as: SessionClass, host: string, group: string | null): void {
    uncount(this.#hosts, host, as);
    if (group !== null) uncount(this.#groups, group, as);
    for (const listener of this.#listeners) listener.call();
  }

  /** A single verification waits for a slot of `host`: batches leave it the next one. Returns its end. */
  wait(host: string, group: string | null): () => void {
    count(this.#hosts, host).waiting += 1;
    if (group !== null) count(this.#groups, group).waiting += 1;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      uncount(this.#hosts, host, 'waiting');
      if (group !== null) uncount(this.#groups, group, 'waiting');
      // A batch held back for it may open now.
      for (const listener of this.#listeners) if (listener.as === 'batch') listener.call();
    };
  }

  /** The single verifications' pool takes batch sessions handed over with `adopt`; returns the end of it. */
  adoptWith(adopt: (offer: SessionOffer) => boolean): () => void {
    this.#adopt = adopt;
    return () => {
      if (this.#adopt === adopt) this.#adopt = null;
    };
  }

  /**
   * A batch session with no work left, offered to the single verifications. True: taken (counted
   * as theirs from now on, the batch's count is the caller's to release); false: the caller QUITs.
   */
  offer(offer: SessionOffer): boolean {
    return this.#adopt?.(offer) ?? false;
  }

  /** Sessions of each class open to `host` now (tests, metrics). */
  openTo(host: string): { single: number; batch: number } {
    const c = this.#hosts.get(host);
    return { single: c?.single ?? 0, batch: c?.batch ?? 0 };
  }

  /**
   * Calls `listener` whenever a slot frees for a session of class `as` (a batch's also when a
   * single verification stops waiting); returns the unsubscription.
   */
  onFree(as: SessionClass, listener: () => void): () => void {
    const entry = { as, call: listener };
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }
}

function fits(as: SessionClass, c: Count | undefined, cap: number): boolean {
  if (c === undefined) return cap > 0;
  const total = c.single + c.batch;
  if (total >= cap) return false;
  // Each class leaves the other one slot of a cap of two or more.
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
