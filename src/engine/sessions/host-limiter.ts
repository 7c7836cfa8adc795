/**
 * Politeness bookkeeping for SMTP sessions: a global cap, a per-MX-host cap, and an
 * exponential back-off for a host that answers 421 or stops answering. Synchronous counters
 * only; the batch engine's scheduler asks `canOpen` before it opens a session. When the slots are
 * shared with other processes (shared-politeness.ts), a session waiting for its shared slot is
 * `reserve`d here, so that it counts against both caps while the answer is on its way.
 *
 * A host may also belong to a group, a mail provider reached through one egress (its key from
 * the scheduler, e.g. `provider:microsoft`): a group has its own cap of sessions and its own pace
 * of new sessions (at most `providerSessionsPerSecond` opened in any second), across all of its
 * hosts. Every method that takes a host takes its group too; without one, nothing changes. The
 * pace counts in a `ProviderPace` (provider-pace.ts): the session broker's for a batch engine
 * given one, which the single verifications' sessions count in too (they do not wait for it).
 */

import type { HostFailure } from '../smtp/session.js';
import type { RequestKind, SessionBroker } from './broker.js';
import { LaneBackoff } from './lane-backoff.js';
import { ProviderPace } from './provider-pace.js';

export interface HostLimiterOptions {
  /** Sessions in flight across all hosts. */
  concurrency: number;
  /** Sessions in flight to one host (keyed by IP address: what a server's limits see). */
  perHostConcurrency: number;
  /** First back-off after a failure; doubles with each failure in a row. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Sessions in flight to one group's hosts together (a provider per egress). Default: no cap. */
  providerConcurrency?: number;
  /** Sessions opened to one group's hosts in any second before this limiter waits. Default: no pace. */
  providerSessionsPerSecond?: number;
  /**
   * Where the sessions opened to a group are counted, whether or not this limiter waits for the
   * pace: the session broker's, shared by both kinds, when it has one. Default: its own.
   */
  pace?: ProviderPace;
  /**
   * The back-off it records failures into and consults (lane-backoff.ts): the session broker's,
   * shared with the single verifications, for a batch engine given one. Default: its own.
   */
  backoff?: LaneBackoff;
}

/** The broker whose caps this limiter's sessions share with the other kind's (broker.ts), and their kind. */
export interface SharedCaps {
  broker: SessionBroker;
  as: RequestKind;
}

interface GroupState {
  active: number;
  pending: number;
}

interface HostState {
  active: number;
  /** Sessions reserved while their shared slot is being acquired. */
  pending: number;
}

/**
 * Counts sessions per host and globally (a host with nothing open is forgotten at once), and
 * consults the hosts' back-off (lane-backoff.ts, which forgets idle hosts by itself).
 */
export class HostLimiter {
  readonly #options: HostLimiterOptions;
  readonly #now: () => number;
  readonly #hosts = new Map<string, HostState>();
  /** Groups are few (providers × egresses) and are kept. */
  readonly #groups = new Map<string, GroupState>();
  #active = 0;
  #pending = 0;
  readonly #shared: SharedCaps | null;
  readonly #backoff: LaneBackoff;
  readonly #pace: ProviderPace;

  constructor(options: HostLimiterOptions, now: () => number, shared: SharedCaps | null = null) {
    this.#options = options;
    this.#now = now;
    this.#shared = shared;
    this.#backoff = options.backoff ?? new LaneBackoff();
    this.#pace = options.pace ?? new ProviderPace();
  }

  /** Calls `listener` when a slot of the broker's caps frees (the other kind let one go); returns the unsubscription. */
  onSharedFree(listener: () => void): () => void {
    return this.#shared?.broker.onFree(this.#shared.as, listener) ?? (() => undefined);
  }

  /** A single verification waits for a slot of `host`: batches sharing the broker's caps leave it the next. Returns its end. */
  waitFor(host: string, group: string | null = null): () => void {
    return this.#shared?.broker.wait(host, group) ?? (() => undefined);
  }

  get active(): number {
    return this.#active;
  }

  /** True when the global cap has room left. */
  hasGlobalRoom(): boolean {
    return this.#active + this.#pending < this.#options.concurrency;
  }

  /** Sessions in flight to `host`. */
  activeFor(host: string): number {
    return this.#hosts.get(host)?.active ?? 0;
  }

  /** Epoch ms until which `host` is backed off; 0 when it is not. */
  backedOffUntil(host: string): number {
    return this.#backoff.backedOffUntil(host, this.#now());
  }

  /**
   * True when a new session to `host` fits both caps and the host is not backed off; with its
   * `group`, when it also fits the group's cap and pace.
   */
  canOpen(host: string, group: string | null = null): boolean {
    if (!this.hasGlobalRoom()) return false;
    if (group !== null && !this.groupHasRoom(group)) return false;
    if (this.#shared !== null && !this.#shared.broker.canOpen(this.#shared.as, host, group)) return false;
    return this.hostHasRoom(host);
  }

  /** True when a new session to `host` fits its per-host cap and the host is not backed off. */
  hostHasRoom(host: string): boolean {
    if (this.#shared !== null && !this.#shared.broker.canOpen(this.#shared.as, host, null)) return false;
    if (this.backedOffUntil(host) > 0) return false;
    const state = this.#hosts.get(host);
    return state === undefined || state.active + state.pending < this.#options.perHostConcurrency;
  }

  /** True when `group` has room for a new session under its cap and its pace. */
  groupHasRoom(group: string): boolean {
    const state = this.#groups.get(group);
    const cap = this.#options.providerConcurrency ?? Infinity;
    if (state !== undefined && state.active + state.pending >= cap) return false;
    return this.groupPacedUntil(group) === 0;
  }

  /** Epoch ms when `group`'s pace lets another session open; 0 when it does now (or only its cap holds it). */
  groupPacedUntil(group: string): number {
    const pace = this.#options.providerSessionsPerSecond;
    if (pace === undefined) return 0;
    return this.#pace.pacedUntil(group, pace, this.#groups.get(group)?.pending ?? 0, this.#now());
  }

  /** Sessions of `group` reserved and waiting for their shared slots. */
  groupPending(group: string): number {
    return this.#groups.get(group)?.pending ?? 0;
  }

  /** Sessions in flight to `group`'s hosts. */
  groupActive(group: string): number {
    return this.#groups.get(group)?.active ?? 0;
  }

  /** Sessions to `host` reserved and waiting for their shared slot. */
  pendingFor(host: string): number {
    return this.#hosts.get(host)?.pending ?? 0;
  }

  /** Counts a session as about to open (its shared slot is being asked for); the caller checked `canOpen`. */
  reserve(host: string, group: string | null = null): void {
    this.#shared?.broker.take(this.#shared.as, host, group);
    this.#state(host).pending += 1;
    this.#pending += 1;
    if (group !== null) this.#group(group).pending += 1;
  }

  /** The reservation ends: `opened` counts it as an opened session, otherwise it is dropped. */
  endReservation(host: string, opened: boolean, group: string | null = null): void {
    this.#shared?.broker.give(this.#shared.as, host, group);
    const state = this.#state(host);
    state.pending = Math.max(0, state.pending - 1);
    this.#pending = Math.max(0, this.#pending - 1);
    if (group !== null) {
      const groupState = this.#group(group);
      groupState.pending = Math.max(0, groupState.pending - 1);
    }
    if (opened) this.acquire(host, group);
    else this.#forgetIfIdle(host, state);
  }

  /** Counts a session as opened; the caller checked `canOpen`. */
  acquire(host: string, group: string | null = null): void {
    this.#shared?.broker.take(this.#shared.as, host, group);
    const state = this.#state(host);
    state.active += 1;
    this.#active += 1;
    if (group !== null) {
      const groupState = this.#group(group);
      groupState.active += 1;
      this.#pace.opened(group, this.#now());
    }
  }

  release(host: string, group: string | null = null): void {
    this.#shared?.broker.give(this.#shared.as, host, group);
    const state = this.#state(host);
    state.active = Math.max(0, state.active - 1);
    this.#active = Math.max(0, this.#active - 1);
    if (group !== null) {
      const groupState = this.#group(group);
      groupState.active = Math.max(0, groupState.active - 1);
    }
    this.#forgetIfIdle(host, state);
  }

  /** The host answered about a recipient: its failure streak ends (a back-off in force stays). */
  succeeded(host: string): void {
    this.#backoff.answered(host, this.#now());
  }

  /**
   * The host refused, answered 421 or timed out: no new session before the back-off passes
   * (base, 2x base, 4x base... up to the maximum). `failure`, when given, is kept as the
   * evidence of the single verifications that skip the host meanwhile. Returns the epoch ms it ends.
   */
  failed(host: string, failure: HostFailure | null = null): number {
    const { backoffBaseMs, backoffMaxMs } = this.#options;
    return this.#backoff.failed(host, failure, { baseMs: backoffBaseMs, maxMs: backoffMaxMs }, this.#now());
  }

  /** No new session to `host` before epoch ms `until` (an egress resting after a policy refusal). */
  restUntil(host: string, until: number): void {
    this.#backoff.restUntil(host, until, this.#now());
  }

  /** Failures in a row of `host`. */
  failuresOf(host: string): number {
    return this.#backoff.failuresOf(host);
  }

  #state(host: string): HostState {
    let state = this.#hosts.get(host);
    if (state === undefined) {
      state = { active: 0, pending: 0 };
      this.#hosts.set(host, state);
    }
    return state;
  }

  #group(group: string): GroupState {
    let state = this.#groups.get(group);
    if (state === undefined) {
      state = { active: 0, pending: 0 };
      this.#groups.set(group, state);
    }
    return state;
  }

  #forgetIfIdle(host: string, state: HostState): void {
    if (state.active === 0 && state.pending === 0) this.#hosts.delete(host);
  }
}
