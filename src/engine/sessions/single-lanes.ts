/**
 * The lanes of single verifications, a lane being one mail host address through one egress
 * (`pairKey`, as the batch engine's): which egress a probe of a host address goes out through, and
 * what the host's answers mean for the lane's next probes.
 *
 * Egresses are taken in turn, skipping one that rests for the host; those the reputation guard
 * rests come only after every one in service rests there. A lane that fails (any stage, any way)
 * is backed off, doubling per failure in a row, and remembers its last failure for the evidence of
 * the probes that skip it; an answer about a recipient ends the streak. An egress refused by
 * policy rests for that host while others reach it. The state is kept in a `LaneBackoff`
 * (lane-backoff.ts) under the lane's key: the session broker's when there is one, so that the
 * batches of the process back these lanes off and count their failures too, else the prober's own.
 * With Redis, the shared health stays the batches' and the shared slots' (shared-politeness.ts).
 */
import type { Egress, EgressGate } from '../egress/egress.js';
import { egressesFor, pairKey, refusesTheClient, usableEgresses } from '../egress/egress.js';
import type { HostResult } from '../smtp/probe-transaction.js';
import type { HostFailure } from '../smtp/session.js';
import { describe } from '../smtp/session.js';
import type { LaneBackoff } from './lane-backoff.js';

/** The egress a probe of one host address goes out through, and whether it rests there. */
export interface Route {
  egress: Egress;
  /** The (egress, host) key of the back-off. */
  key: string;
  resting: HostFailure | null;
}

export interface SingleLanesOptions {
  /** First back-off of a lane after a failure, doubling per failure in a row. */
  backoffMs: number;
  backoffMaxMs: number;
  /** How long an egress refused by policy stays away from that host, when there are others. */
  egressRestMs: number;
}

export interface SingleLanesDeps {
  /** Milliseconds since the epoch. */
  clock: () => number;
  /** The lanes' back-off: the broker's (shared with the process's batches), or the prober's own. */
  backoff: LaneBackoff;
  /** The reputation guard (../egress/egress-guard.ts): resting egresses are taken last. */
  guard: EgressGate | null;
}

export class SingleLanes {
  readonly #egresses: readonly Egress[];
  readonly #options: SingleLanesOptions;
  readonly #deps: SingleLanesDeps;
  /** Turn of the next probe in the egress rotation. */
  #turn = 0;

  constructor(egresses: readonly Egress[], options: SingleLanesOptions, deps: SingleLanesDeps) {
    this.#egresses = egresses;
    this.#options = options;
    this.#deps = deps;
  }

  /**
   * The next egress in turn for host `address`, skipping those that rest there; when all rest,
   * the one whose turn it was, with its rest (the probe then reports it without connecting).
   * Egresses the reputation guard rests come only after every one in service rests for the host.
   */
  route(address: string): Route {
    const all = egressesFor(this.#egresses, address);
    const preferred = usableEgresses(this.#deps.guard, all, (e) => e);
    const turn = this.#turn;
    this.#turn = (turn + 1) % 1_000_000;
    let first: Route | null = null;
    for (const egresses of preferred === all
      ? [all]
      : [preferred, all.filter((e) => !preferred.includes(e))]) {
      for (let i = 0; i < egresses.length; i++) {
        const egress = egresses[(turn + i) % egresses.length]!;
        const key = pairKey(egress, address);
        const route = { egress, key, resting: this.#resting(key) };
        if (route.resting === null) return route;
        first ??= route;
      }
    }
    return first!;
  }

  /**
   * What the host at `address` concluded on lane `key` means for the lane's next probes: a failure
   * backs it off, and so does a refusal of the prober at the banner, EHLO or MAIL FROM; a reply
   * that refuses the prober itself (our address, not the recipient) rests the egress there; an
   * answer about a recipient ends the failure streak. A verification our own cap kept waiting
   * says nothing about the host.
   */
  learn(address: string, key: string, result: HostResult): void {
    if (result.type === 'failed') {
      if (result.queued === true) return;
      this.failed(key, result.failure);
      if (result.failure.reply !== null && refusesTheClient(result.failure.reply)) this.rest(address, key);
    } else if (result.type === 'decided' && result.stage !== 'rcpt') {
      const reply = result.reply;
      if (result.kind === 'blocked' || refusesTheClient(reply)) this.rest(address, key);
      this.failed(key, {
        kind: result.kind === 'greylisted' ? 'greylisted' : 'blocked',
        stage: result.stage,
        cause: 'reply',
        reply,
        detail: `${result.stage}: ${describe(reply)}`,
        tls: result.tls,
      });
    } else if (result.type === 'decided') {
      if (result.kind === 'blocked' && refusesTheClient(result.reply)) this.rest(address, key);
      this.answered(key);
    }
  }

  /** The lane `key` failed: backed off, its failure kept for the probes that skip it. */
  failed(key: string, failure: HostFailure): void {
    const { backoffMs, backoffMaxMs } = this.#options;
    this.#deps.backoff.failed(key, failure, { baseMs: backoffMs, maxMs: backoffMaxMs }, this.#deps.clock());
  }

  /** The lane `key` answered about a recipient: its failure streak ends. */
  answered(key: string): void {
    this.#deps.backoff.answered(key, this.#deps.clock());
  }

  /** The egress of `key` rests for host `address` after a policy refusal, while others can reach it. */
  rest(address: string, key: string): void {
    if (egressesFor(this.#egresses, address).length < 2) return;
    const now = this.#deps.clock();
    this.#deps.backoff.restUntil(key, now + this.#options.egressRestMs, now);
  }

  /**
   * While the lane is backed off (by a probe or a batch of this process): its last failure (cause
   * kept), with why it is not asked; a failure of cause `backed-off` when none is known (a rest
   * after a policy refusal that came with no failure). Null when it may be asked.
   */
  #resting(key: string): HostFailure | null {
    const { backoff, clock } = this.#deps;
    const now = clock();
    if (backoff.backedOffUntil(key, now) === 0) return null;
    const last = backoff.lastFailure(key, now);
    const why = `not asked: backed off after ${backoff.failuresOf(key)} failure(s) in a row`;
    if (last === null)
      return {
        kind: 'unavailable',
        stage: 'connect',
        cause: 'backed-off',
        reply: null,
        detail: why,
        tls: false,
      };
    return { ...last, detail: `${why} (last: ${last.detail})` };
  }
}
