/**
 * Budgets of attempts in fixed windows, counted in the store so that every process sees them:
 * failed sign-ins per (address, client address), wrong current passwords per member, reset
 * e-mails per address; and the proof-of-work solutions already used (`spendOnce`). Keys are
 * SHA-256 hashes, never an address or an id as such.
 *
 * An attempt is reserved before the work it guards (the password hash) with one atomic upsert
 * that returns the window's count: concurrent attempts each see their own number, so a burst
 * cannot all pass a check made before any of them is counted (issue 16). A success gives the
 * reservations back (`forgetAttempts`).
 */
import { createHash } from 'node:crypto';
import { MINUTE } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import { addSignInFailure, countSignInFailures, deleteSignInFailures } from '../../store/session.store.js';

/** Failed sign-ins and password changes are counted in windows of this length. */
export const FAILURE_WINDOW_MS = 15 * MINUTE;

export interface Budget {
  /** Attempts allowed per window; 0: no limit. */
  limit: number;
  windowMs: number;
  /** What is counted, for the refusal's message ("failed sign-ins for this address"). */
  what: string;
}

export function failureWindow(now: Date, windowMs = FAILURE_WINDOW_MS): { start: string; end: Date } {
  const start = Math.floor(now.getTime() / windowMs) * windowMs;
  return { start: new Date(start).toISOString(), end: new Date(start + windowMs) };
}

/**
 * Takes one attempt of `key` from the current window's budget, before the work it guards, and
 * returns the window's count with it (0 without a limit); 429 `rate_limit_exceeded` with
 * `retryAfterSeconds` when the budget is spent.
 */
export async function reserveAttempt(db: Executor, key: string, budget: Budget, now: Date): Promise<number> {
  if (budget.limit === 0) return 0;
  const window = failureWindow(now, budget.windowMs);
  const count = await addSignInFailure(db, key, window.start);
  if (count <= budget.limit) return count;
  const wait = Math.max(1, Math.ceil((window.end.getTime() - now.getTime()) / 1000));
  throw new AppError('rate_limit_exceeded', `too many ${budget.what}; retry in ${Math.ceil(wait / 60)} min`, {
    retryAfterSeconds: wait,
  });
}

/** Counts one attempt of `key` in the current window, without a limit (a failure seen after the fact). */
export async function recordAttempt(
  db: Executor,
  key: string,
  now: Date,
  windowMs = FAILURE_WINDOW_MS,
): Promise<void> {
  await addSignInFailure(db, key, failureWindow(now, windowMs).start);
}

/** The attempts of `key` counted in the current window. */
export async function countAttempts(
  db: Executor,
  key: string,
  now: Date,
  windowMs = FAILURE_WINDOW_MS,
): Promise<number> {
  return countSignInFailures(db, key, failureWindow(now, windowMs).start);
}

/**
 * Whether this is the first use of `key` (a proof-of-work solution, sign-in-challenge.ts): one
 * atomic upsert in the same counters, its window named by `until` (when the thing used expires),
 * so that the row outlives it and is swept with the old windows (`deleteOldSignInFailures`).
 */
export async function spendOnce(db: Executor, key: string, until: Date): Promise<boolean> {
  return (await addSignInFailure(db, key, until.toISOString())) === 1;
}

/** Forgets every window of `key` (a success gives its reservations back). */
export async function forgetAttempts(db: Executor, key: string): Promise<void> {
  await deleteSignInFailures(db, key);
}

/** The failure key of a value: its SHA-256, so that no address or id is stored as such. */
export const failureKey = (value: string): string => createHash('sha256').update(value).digest('hex');
