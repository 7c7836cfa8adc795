/**
 * The back-off of lanes (one mail host address through one egress, `pairKey`): per lane, its
 * failures in a row, the epoch ms before which no new session opens there, and its last failure
 * (the evidence of the single verifications that skip the lane). Synchronous and in-process.
 *
 * The session broker (broker.ts) keeps one table for both kinds of request: a batch's failures at
 * a host back off the single verifications to that lane and theirs count in the batch's streak
 * (`maxHostFailures`). A batch engine or a prober built without a broker keeps a table of its
 * own. Each kind records a failure with its own back-off settings: the delay is its base doubled
 * per failure of the lane's one streak, up to its maximum, and a back-off in force is never
 * shortened (so the longer of the two holds), as the shared health in Redis does
 * (../coordination.ts `HostHealth`). The caller's clock is passed in: each kind keeps its own.
 */
import type { HostFailure } from '../smtp/session.js';

interface LaneState {
  failuresInARow: number;
  /** Epoch ms before which no new session may be opened. */
  notBefore: number;
  /** The failure that last backed the lane off; shown while the back-off lasts. */
  last: HostFailure | null;
}

/** Lanes known at once before those with no back-off in force are forgotten (streak and all). */
const SWEEP_AT = 10_000;

/**
 * A lane that answers with no back-off in force is forgotten at once; one whose back-off ended is
 * forgotten, streak and all, when many lanes are known (a batch over a million domains must not
 * keep a million entries).
 */
export class LaneBackoff {
  readonly #lanes = new Map<string, LaneState>();
  #sweepAt = SWEEP_AT;

  /** Failures in a row of lane `key`. */
  failuresOf(key: string): number {
    return this.#lanes.get(key)?.failuresInARow ?? 0;
  }

  /** Epoch ms until which lane `key` is backed off at `now`; 0 when it is not. */
  backedOffUntil(key: string, now: number): number {
    const state = this.#lanes.get(key);
    return state !== undefined && state.notBefore > now ? state.notBefore : 0;
  }

  /** The last failure of lane `key` while it is backed off at `now`; null otherwise or when none is known. */
  lastFailure(key: string, now: number): HostFailure | null {
    const state = this.#lanes.get(key);
    return state !== undefined && state.notBefore > now ? state.last : null;
  }

  /**
   * Lane `key` failed at `now` (`failure`, when known, is its evidence): the streak grows and the
   * lane is backed off for `baseMs × 2^(failures − 1)`, at most `maxMs`, never shortening a
   * back-off in force. Returns the epoch ms it ends.
   */
  failed(
    key: string,
    failure: HostFailure | null,
    backoff: { baseMs: number; maxMs: number },
    now: number,
  ): number {
    const state = this.#state(key, now);
    state.failuresInARow += 1;
    const delay = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(30, state.failuresInARow - 1));
    state.notBefore = Math.max(state.notBefore, now + delay);
    if (failure !== null) state.last = failure;
    return state.notBefore;
  }

  /** Lane `key` answered about a recipient: its streak ends (a back-off in force stays). */
  answered(key: string, now: number): void {
    const state = this.#lanes.get(key);
    if (state === undefined) return;
    state.failuresInARow = 0;
    if (state.notBefore <= now) this.#lanes.delete(key);
  }

  /** No new session on lane `key` before epoch ms `until`, whatever its streak (a policy refusal's rest). */
  restUntil(key: string, until: number, now: number): void {
    const state = this.#state(key, now);
    state.notBefore = Math.max(state.notBefore, until);
  }

  #state(key: string, now: number): LaneState {
    let state = this.#lanes.get(key);
    if (state === undefined) {
      if (this.#lanes.size >= this.#sweepAt) this.#sweep(now);
      state = { failuresInARow: 0, notBefore: 0, last: null };
      this.#lanes.set(key, state);
    }
    return state;
  }

  #sweep(now: number): void {
    for (const [key, state] of this.#lanes) if (state.notBefore <= now) this.#lanes.delete(key);
    // Lanes that stay (backed off) do not make every new lane pay for a sweep.
    this.#sweepAt = Math.max(SWEEP_AT, 2 * this.#lanes.size);
  }
}
