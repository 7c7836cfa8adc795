/**
 * Budgets of failed attempts in fixed windows (15 minutes), counted in the store so that every
 * process sees them: failed sign-ins per address, wrong current passwords per member. Keys are
 * SHA-256 hashes, never an address or an id as such.
 */
import { createHash } from 'node:crypto';
import { MINUTE } from '../clock.js';
import { AppError } from '../errors.js';
import type { Executor } from '../store/executor.js';
import { addSignInFailure, countSignInFailures } from '../store/session.store.js';

/** Failures are counted in windows of this length. */
export const FAILURE_WINDOW_MS = 15 * MINUTE;

export function failureWindow(now: Date): { start: string; end: Date } {
  const start = Math.floor(now.getTime() / FAILURE_WINDOW_MS) * FAILURE_WINDOW_MS;
  return { start: new Date(start).toISOString(), end: new Date(start + FAILURE_WINDOW_MS) };
}

/**
 * Refuses with 429 `rate_limit_exceeded` when `key` (a hash, never an address) has used up its
 * `limit` failures of the current window; `limit` 0: no limit.
 */
export async function refuseOverFailureBudget(
  db: Executor,
  key: string,
  limit: number,
  now: Date,
  what: string,
): Promise<void> {
  const window = failureWindow(now);
  if (limit === 0 || (await countSignInFailures(db, key, window.start)) < limit) return;
  const wait = Math.max(1, Math.ceil((window.end.getTime() - now.getTime()) / 1000));
  throw new AppError('rate_limit_exceeded', `too many ${what}; retry in ${Math.ceil(wait / 60)} min`, {
    retryAfterSeconds: wait,
  });
}

/** Counts one failure of `key` in the current window (see refuseOverFailureBudget). */
export async function recordFailure(db: Executor, key: string, limit: number, now: Date): Promise<void> {
  if (limit > 0) await addSignInFailure(db, key, failureWindow(now).start);
}

/** The failure key of a value: its SHA-256, so that no address or id is stored as such. */
export const failureKey = (value: string): string => createHash('sha256').update(value).digest('hex');
