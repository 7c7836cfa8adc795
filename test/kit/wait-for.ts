import { setTimeout as sleep } from 'node:timers/promises';

/** Waits until `check` returns a value other than undefined, polling every `everyMs`; throws after `withinMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  withinMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(everyMs);
  }
}
