/**
 * The lanes of single verifications, a lane being one mail host address through one egress
 * (`pairKey`, as the batch engine's): which egress a probe of a host address goes out through, and
 * what the host's answers mean for the lane's next probes.
 *
 * Egresses are taken in turn, skipping one that rests for the host; those the reputation guard
 * rests come only after every one in service rests there. A lane that fails (any stage, any way)
 * is backed off, doubling per failure in a row, and remembers its last failure for the evidence of
 * the probes that skip it; an answer about a recipient ends the streak. An egress refused by
 * policy rests for that host while others reach it. The state is kept in a `HostHealth` under the
 * lane's key: this process's, or the one shared with the batch engines through Redis.
 */
import type { HostHealth } from '../coordination.js';
import type { Egress, EgressGate } from '../egress/egress.js';
import { egressesFor, pairKey, refusesTheClient, usableEgresses } from '../egress/egress.js';
import type { HostResult } from '../smtp/probe-transaction.js';
import type { HostFailure } from '../smtp/session.js';
import { describe } from '../smtp/session.js';
import { TtlMap } from '../ttl-map.js';

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
  health: HostHealth;
  /** The reputation guard (../egress/egress-guard.ts): resting egresses are taken last. */
  guard: EgressGate | null;
}

/** Lanes whose last failure is remembered (for the evidence of probes that skip them). */
const MAX_REMEMBERED_FAILURES = 10_000;

export class SingleLanes {
  readonly #egresses: readonly Egress[];
  readonly #options: SingleLanesOptions;
  readonly #deps: SingleLanesDeps;
  /** Turn of the next probe in the egress rotation. */
  #turn = 0;
  /** The last failure of each lane, kept as long as a back-off can last. */
  readonly #lastFailure: TtlMap<string, HostFailure>;

  constructor(egresses: readonly Egress[], options: SingleLanesOptions, deps: SingleLanesDeps) {
    this.#egresses = egresses;
    this.#options = options;
    this.#deps = deps;
    this.#lastFailure = new TtlMap(MAX_REMEMBERED_FAILURES, deps.clock);
  }

  /**
   * The next egress in turn for host `address`, skipping those that rest there; when all rest,
   * the one whose turn it was, with its rest (the probe then reports it without connecting).
   * Egresses the reputation guard rests come only after every one in service rests for the host.
   */
  async route(address: string): Promise<Route> {
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
        const route = { egress, key, resting: await this.#resting(key) };
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
    this.#lastFailure.set(key, failure, backoffMaxMs);
    this.#deps.health.recordFailure(key, backoffMs, backoffMaxMs).catch(() => undefined);
  }

  /** The lane `key` answered about a recipient: its failure streak ends. */
  answered(key: string): void {
    this.#deps.health.recordSuccess(key).catch(() => undefined);
  }

  /** The egress of `key` rests for host `address` after a policy refusal, while others can reach it. */
  rest(address: string, key: string): void {
    if (egressesFor(this.#egresses, address).length < 2) return;
    const until = this.#deps.clock() + this.#options.egressRestMs;
    this.#deps.health.restUntil(key, until).catch(() => undefined);
  }

  /**
   * While the lane is backed off: its last failure (cause kept), with why it is not asked; a
   * failure of cause `backed-off` when another process backed it off. Null when it may be asked.
   */
  async #resting(key: string): Promise<HostFailure | null> {
    let state;
    try {
      state = await this.#deps.health.get(key);
    } catch {
      return null;
    }
    if (state.notBefore <= this.#deps.clock()) return null;
    const last = this.#lastFailure.get(key);
    const why = `not asked: backed off after ${state.failuresInARow} failure(s) in a row`;
    if (last === undefined)
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
