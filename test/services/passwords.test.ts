/**
 * The password hash's bounded queue (src/services/passwords.ts): what waits, what is refused, and
 * the lane that goes first.
 */
import { describe, expect, it } from 'vitest';
import {
  HASH_CONCURRENCY,
  HASH_QUEUE_LIMIT,
  hashPassword,
  verifyPassword,
} from '../../src/services/passwords.js';

const SLOW = { timeout: 60_000 };

describe('the password hash queue', SLOW, () => {
  it("admits the first lane's hash when the other lane is full, and runs it before those waiting", async () => {
    const stored = await hashPassword('the right password');
    const done: string[] = [];
    const others = Array.from({ length: HASH_CONCURRENCY + HASH_QUEUE_LIMIT }, (_, i) =>
      verifyPassword('a guess', stored).then((ok) => {
        done.push(`other ${i}`);
        return ok;
      }),
    );
    await expect(verifyPassword('one guess too many', stored)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    const first = verifyPassword('the right password', stored, 'first').then((ok) => {
      done.push('first');
      return ok;
    });
    expect(await first).toBe(true);
    expect(await Promise.all(others)).toEqual(others.map(() => false));
    // It takes the first slot that frees up, not the queue's end (in a queue of one lane it would
    // end last, after all ten); hashes in the other slot may still finish while it runs.
    expect(done.indexOf('first')).toBeLessThan(HASH_QUEUE_LIMIT);
  });

  it('refuses the first lane too once it is full itself', async () => {
    const stored = await hashPassword('the right password');
    const all = Array.from({ length: HASH_CONCURRENCY + HASH_QUEUE_LIMIT + 1 }, () =>
      verifyPassword('a guess', stored, 'first').then(
        () => 'checked',
        (err: { code?: string }) => err.code,
      ),
    );
    const outcomes = await Promise.all(all);
    expect(outcomes.filter((o) => o === 'service_unavailable')).toHaveLength(1);
  });
});
