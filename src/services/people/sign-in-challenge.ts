/**
 * The proof of work a sign-in needs after repeated failures (issue 16, defect 2; docs/dashboard.md,
 * "Sign-in limits"): an ALTCHA challenge (altcha-lib, self-hosted, no third party) that the sign-in
 * page's widget solves in the browser in about a second, and that the server checks in
 * microseconds.
 *
 * A challenge is signed with an HMAC key derived from the store's secret key (HKDF,
 * store/secret-box.ts), so a challenge made by one API process verifies on any other behind the
 * same load balancer. It is made in ALTCHA's deterministic mode: the server picks the counter the
 * browser must find and signs the key it leads to, so checking a solution is two HMACs, never the
 * work itself.
 *
 * Its expiry travels in the signed `data` and is checked against the service's clock (altcha-lib
 * checks `parameters.expiresAt` against the machine's wall clock, which a test's clock is not).
 *
 * A solution is good once: its challenge's signature is spent in the store's attempt counters
 * (failure-budget.ts `spendOnce`, one atomic upsert, seen by every process, with or without
 * Redis), kept until an hour after the challenge expired and then swept with the old failure
 * windows. No table of its own, no process memory to lose at a restart.
 */
import { createChallenge, verifySolution, type Challenge, type Payload } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { randomInt } from 'node:crypto';
import { MINUTE, type Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import { storeSecrets } from '../../store/backend.js';
import { failureKey, spendOnce } from './failure-budget.js';

/** How long a challenge can be solved and used. */
export const CHALLENGE_TTL_MS = 5 * MINUTE;

/**
 * The work: SHA-256 iterated `COST` times per counter, and the counter the browser must reach is
 * drawn from this range. Measured on the shared 2-core development machine: Node solves
 * 10 × 20 000 in about 0.2 s on one core; headless Chromium's widget (Web Crypto, 2 workers)
 * found counters of 11 659 to 17 809 in 0.55 to 1.45 s (test/e2e/sign-in-challenge.test.ts
 * prints it). The server's check is two HMACs whatever the range.
 */
export const CHALLENGE_ALGORITHM = 'SHA-256';
export const CHALLENGE_COST = 10;
export const CHALLENGE_COUNTER = { min: 10_000, max: 20_000 } as const;

/** What the 428 `challenge_required` says, by reason. */
const REFUSALS = {
  missing: 'solve the proof-of-work challenge to sign in after several failed attempts',
  invalid: 'the proof-of-work solution is not valid; solve a new challenge',
  expired: 'the proof-of-work challenge has expired; solve a new challenge',
  reused: 'the proof-of-work solution was already used; solve a new challenge',
} as const;

function secretsOf(db: Executor): { hmacSignatureSecret: string; hmacKeySignatureSecret: string } {
  const box = storeSecrets(db);
  return {
    hmacSignatureSecret: box.deriveKey('sign-in-challenge').toString('hex'),
    hmacKeySignatureSecret: box.deriveKey('sign-in-challenge-key').toString('hex'),
  };
}

/** A fresh signed challenge, as the widget takes it (GET /dashboard/api/session/challenge). */
export async function createSignInChallenge(db: Executor, clock: Clock): Promise<Challenge> {
  const expires = Math.floor((clock.now().getTime() + CHALLENGE_TTL_MS) / 1000);
  return createChallenge({
    algorithm: CHALLENGE_ALGORITHM,
    cost: CHALLENGE_COST,
    counter: randomInt(CHALLENGE_COUNTER.min, CHALLENGE_COUNTER.max + 1),
    deriveKey,
    data: { purpose: 'sign-in', expires },
    ...secretsOf(db),
  });
}

function parsePayload(text: string): Payload | null {
  try {
    const payload = JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as unknown;
    if (typeof payload !== 'object' || payload === null) return null;
    const { challenge, solution } = payload as Partial<Payload>;
    if (typeof challenge?.parameters !== 'object' || challenge.parameters === null) return null;
    if (typeof challenge.signature !== 'string' || typeof solution !== 'object' || solution === null)
      return null;
    return { challenge, solution };
  } catch {
    return null;
  }
}

/**
 * Accepts the widget's payload (base64 JSON of the challenge and its solution) once; 428
 * `challenge_required` when it is missing, forged, wrong, expired or already used.
 */
export async function spendSignInChallenge(
  db: Executor,
  clock: Clock,
  altcha: string | undefined,
): Promise<void> {
  if (altcha === undefined || altcha === '') throw new AppError('challenge_required', REFUSALS.missing);
  const payload = parsePayload(altcha);
  if (payload === null) throw new AppError('challenge_required', REFUSALS.invalid);
  const result = await verifySolution({
    challenge: payload.challenge,
    solution: payload.solution,
    deriveKey,
    ...secretsOf(db),
  }).catch(() => null);
  if (result === null || !result.verified) throw new AppError('challenge_required', REFUSALS.invalid);
  // Signed with the rest: only the server's own challenges carry these.
  const { purpose, expires } = payload.challenge.parameters.data ?? {};
  if (purpose !== 'sign-in' || typeof expires !== 'number')
    throw new AppError('challenge_required', REFUSALS.invalid);
  const expiresAt = new Date(expires * 1000);
  if (clock.now() >= expiresAt) throw new AppError('challenge_required', REFUSALS.expired);
  const spent = await spendOnce(
    db,
    failureKey(`sign-in-challenge:${payload.challenge.signature}`),
    expiresAt,
  );
  if (!spent) throw new AppError('challenge_required', REFUSALS.reused);
}
