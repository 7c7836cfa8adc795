/**
 * The password hash's bounded queue (src/services/people/passwords.ts): what waits, what is refused, and
 * the lane that goes first.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_HASH_COST } from '../../src/config.js';
import {
  HASH_CONCURRENCY,
  HASH_QUEUE_LIMIT,
  hashPassword,
  needsRehash,
  setPasswordHashCost,
  verifyPassword,
} from '../../src/services/people/passwords.js';

// The queue at the service's own cost (the suite's setup file lowers it for every other test).
beforeAll(() => setPasswordHashCost(PASSWORD_HASH_COST.default));

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

describe('the password hash cost', () => {
  it('makes new hashes at the set cost, verifies those of another, and asks to remake only weaker ones', async () => {
    setPasswordHashCost(10);
    const weak = await hashPassword('a password');
    setPasswordHashCost(12);
    const stronger = await hashPassword('a password');
    expect(weak.split('$').slice(0, 4)).toEqual(['scrypt', '1024', '8', '1']);
    expect(stronger.split('$').slice(0, 4)).toEqual(['scrypt', '4096', '8', '1']);
    expect(await verifyPassword('a password', weak)).toBe(true);
    expect(await verifyPassword('another', stronger)).toBe(false);
    expect([needsRehash(weak), needsRehash(stronger)]).toEqual([true, false]);
    setPasswordHashCost(PASSWORD_HASH_COST.default);
  });

  it('refuses a cost outside its bounds', () => {
    expect(() => setPasswordHashCost(PASSWORD_HASH_COST.min - 1)).toThrow(RangeError);
    expect(() => setPasswordHashCost(PASSWORD_HASH_COST.max + 1)).toThrow(RangeError);
    expect(() => setPasswordHashCost(12.5)).toThrow(RangeError);
  });
});
