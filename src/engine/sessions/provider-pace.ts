/**
 * The pace of new sessions per provider group (a mail provider through one egress, e.g.
 * `provider:microsoft` as the scheduler keys it): the sessions opened to the group's hosts in the
 * last second, whoever opened them. The session broker (broker.ts) keeps one for both kinds of
 * request: every new session of either counts, and only batches wait for it
 * (`providerSessionsPerSecond`, `--provider-session-rate`): a single verification is a person
 * waiting and goes first, so the batches slow down while single verifications open sessions to
 * the provider. A batch engine or a prober built without a broker keeps a pace of its own.
 * The caller's clock is passed in: each kind keeps its own.
 */

/** The window of the pace: it counts the sessions opened in any such window. */
export const PACE_WINDOW_MS = 1_000;

export class ProviderPace {
  /** Epoch ms of the sessions opened to each group in the last window, oldest first. */
  readonly #starts = new Map<string, number[]>();

  /** A session to one of `group`'s hosts opened at `now`. */
  opened(group: string, now: number): void {
    this.recent(group, now);
    const starts = this.#starts.get(group);
    if (starts === undefined) this.#starts.set(group, [now]);
    else starts.push(now);
  }

  /** Sessions opened to `group`'s hosts in the window before `now` (older starts are dropped). */
  recent(group: string, now: number): number {
    const starts = this.#starts.get(group);
    if (starts === undefined) return 0;
    const since = now - PACE_WINDOW_MS;
    let old = 0;
    while (old < starts.length && starts[old]! <= since) old += 1;
    if (old > 0) starts.splice(0, old);
    if (starts.length === 0) this.#starts.delete(group);
    return starts.length;
  }

  /**
   * Epoch ms when `group` has room for another session under a pace of `perSecond` with `pending`
   * more about to open; 0 when it has now.
   */
  pacedUntil(group: string, perSecond: number, pending: number, now: number): number {
    if (this.recent(group, now) + pending < perSecond) return 0;
    const oldest = this.#starts.get(group)?.[0];
    return oldest === undefined ? 0 : oldest + PACE_WINDOW_MS;
  }
}
