/**
 * Verifying one address for an API request. Order: syntax (a malformed address is refused with
 * `invalid_email_format` and never counted), then for a test key the fixed test result, for a
 * live key the quota (one verification, counted before the probe and never refunded, since an
 * `unknown` verdict costs a probe too) and then the engine.
 */
import type { Clock } from '../clock.js';
import type { VerificationResult, Verifier } from '../engine/types.js';
import { parseAddress } from '../engine/syntax.js';
import { AppError } from '../errors.js';
import type { Executor } from '../store/executor.js';
import type { KeyKind } from './keys.service.js';
import type { PlanTable } from './plans.js';
import { testModeResult } from './test-mode.js';
import { consumeQuota } from './usage.service.js';
import type { UsageCache } from './usage-cache.js';

/** The contract's limit on `email` (RFC 5321's 256-octet path minus the angle brackets). */
export const MAX_ADDRESS_LENGTH = 254;

export interface VerifyDeps {
  db: Executor;
  verifier: Verifier;
  clock: Clock;
  plans: PlanTable;
  testDomain: string;
  /** Emptied for the account when this process counts or refunds (services/usage-cache.ts). */
  usageCache?: UsageCache;
}

export interface VerifyInput {
  accountId: string;
  kind: KeyKind;
  email: string;
  timeoutMs: number;
}

/** Throws AppError `invalid_email_format` unless `email` is a well-formed address. */
export function assertWellFormed(email: string): void {
  assertLength(email);
  const parsed = parseAddress(email);
  if (!parsed.ok) throw malformed(parsed.error);
}

function assertLength(email: string): void {
  if (email.length > MAX_ADDRESS_LENGTH)
    throw new AppError('invalid_email_format', `the address is longer than ${MAX_ADDRESS_LENGTH} characters`);
}

function malformed(error: string | null): AppError {
  return new AppError('invalid_email_format', `the address is malformed: ${error ?? 'invalid'}`);
}

export async function verifyOne(deps: VerifyDeps, input: VerifyInput): Promise<VerificationResult> {
  if (input.kind === 'test') {
    // The offline verification parses the address anyway: its syntax check is the refusal.
    assertLength(input.email);
    const result = testModeResult(input.email, deps.verifier, deps.testDomain);
    if (result.checks.syntax.passed !== true) throw malformed(result.checks.syntax.error);
    return result;
  }
  assertWellFormed(input.email);
  await consumeQuota(deps.db, {
    accountId: input.accountId,
    count: 1,
    now: deps.clock.now(),
    plans: deps.plans,
    usageCache: deps.usageCache,
  });
  return deps.verifier.verify(input.email, { timeoutMs: input.timeoutMs });
}
