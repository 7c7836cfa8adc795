import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A wait for an event is never cut shorter than this: the `withinMs` a test names is what the
 * event takes on a quiet machine, and a loaded one (two cores, load 20-30) takes several times
 * that. Inside the tests' own 60 s, so an event that never comes still fails the test.
 */
export const MIN_WAIT_MS = 30_000;

/** vi.waitFor's options with that bound (its default second is a margin a loaded machine overruns). */
export const WAIT_FOR = { timeout: MIN_WAIT_MS };

/**
 * Waits until `check` returns a value other than undefined, polling every `everyMs`; throws after
 * `withinMs` or MIN_WAIT_MS, whichever is longer.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  withinMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + Math.max(withinMs, MIN_WAIT_MS);
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(everyMs);
  }
}
