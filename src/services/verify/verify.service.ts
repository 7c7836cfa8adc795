/**
 * Verifying one address for an API request. Order: syntax (a malformed address is refused with
 * `invalid_email_format` and never counted), then for a test key the fixed test result, for a
 * live key the quota (one verification, counted before the probe and never refunded, since an
 * `unknown` verdict costs a probe too) and then the result cache (unless `fresh`) or the engine.
 * An answer from the cache counts like a probe (docs/api.md, "Result cache": what a caller is
 * charged must not depend on what other requests happened to leave in the cache).
 *
 * A request for the SMTP conversation (`transcript`) is answered by a probe, never from the cache
 * (a cached answer has no conversation, and an old one would not be this request's); its result
 * replaces the cached one as with `fresh`, without the conversation: the cache never holds one.
 * A test key's conversation is empty: nothing crossed the wire.
 *
 * A live verification asks the account's own data first (services/outcomes/account-data.ts): a
 * filter, a hard bounce or a complaint answers at once, with no cache look-up and no network check
 * (docs/outcomes.md); otherwise the answer, cached or
 * probed, carries `checks.history`. The cache holds the engine's result without it, so a cached
 * answer always shows the history as it is now.
 */
import type { Clock } from '../../clock.js';
import type { TranscriptLine, VerificationResult, Verifier, WellFormedAddress } from '../../engine/types.js';
import { parseAddress } from '../../engine/syntax.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import type { KeyKind } from '../keys/keys.service.js';
import type { PlanTable } from '../usage/plans.js';
import { testModeResult } from './test-mode.js';
import { consumeQuota } from '../usage/usage.service.js';
import type { UsageCache } from '../usage/usage-cache.js';
import type { ResultCache } from './result-cache.js';
import { decideByAccount, finishWithAccount } from '../outcomes/account-data.js';
import { NO_HISTORY } from '../outcomes/history.js';
import type { VerdictLog } from '../outcomes/verdict-log.js';

/** The contract's limit on `email` (RFC 5321's 256-octet path minus the angle brackets). */
export const MAX_ADDRESS_LENGTH = 254;

export interface VerifyDeps {
  db: Executor;
  verifier: Verifier;
  clock: Clock;
  plans: PlanTable;
  testDomain: string;
  /** Emptied for the account when this process counts or refunds (services/usage/usage-cache.ts). */
  usageCache?: UsageCache;
  /** Conclusive live results given again without a probe (services/verify/result-cache.ts); absent: none. */
  resultCache?: ResultCache;
  /** Remembers the verdicts of live verifications for the accuracy report (services/outcomes/verdict-log.ts). */
  verdictLog: VerdictLog;
}

export interface VerifyInput {
  accountId: string;
  kind: KeyKind;
  email: string;
  timeoutMs: number;
  /** true: probe even when the cache holds an answer (the new result replaces it). */
  fresh?: boolean;
  /** true: return the SMTP conversation too (and probe, whatever the cache holds). */
  transcript?: boolean;
}

/**
 * The request's one parse of its address: the result cache and the engine take it parsed.
 * Throws AppError `invalid_email_format` unless `email` is a well-formed address.
 */
export function parseWellFormed(email: string): WellFormedAddress {
  assertLength(email);
  const parsed = parseAddress(email);
  if (!parsed.ok) throw malformed(parsed.error);
  return parsed;
}

function assertLength(email: string): void {
  if (email.length > MAX_ADDRESS_LENGTH)
    throw new AppError('invalid_email_format', `the address is longer than ${MAX_ADDRESS_LENGTH} characters`);
}

function malformed(error: string | null): AppError {
  return new AppError('invalid_email_format', `the address is malformed: ${error ?? 'invalid'}`);
}

/** A verification's result, and whether it came from the result cache. */
export interface VerifyAnswer {
  result: VerificationResult;
  cached: boolean;
  /** When the result was found out: now for a probe or a test key, earlier for a cached answer. */
  checkedAt: Date;
  /** The SMTP conversation, only when `VerifyInput.transcript` asked for it. */
  transcript?: TranscriptLine[];
}

export async function verifyOne(deps: VerifyDeps, input: VerifyInput): Promise<VerifyAnswer> {
  if (input.kind === 'test') {
    // The offline verification parses the address anyway: its syntax check is the refusal.
    // Test keys never read or fill the result cache.
    assertLength(input.email);
    const result = testModeResult(input.email, deps.verifier, deps.testDomain);
    if (result.checks.syntax.passed !== true) throw malformed(result.checks.syntax.error);
    return { result, cached: false, checkedAt: deps.clock.now(), ...withTranscript(input, []) };
  }
  const address = parseWellFormed(input.email);
  await consumeQuota(deps.db, {
    accountId: input.accountId,
    count: 1,
    now: deps.clock.now(),
    plans: deps.plans,
    usageCache: deps.usageCache,
  });
  const [decision] = await decideByAccount(deps, input.accountId, [address]);
  if (decision && 'result' in decision)
    return {
      result: decision.result,
      cached: false,
      checkedAt: deps.clock.now(),
      ...withTranscript(input, []),
    };
  const history = decision?.history ?? NO_HISTORY;
  const cache = deps.resultCache;
  if (cache && input.fresh !== true && input.transcript !== true) {
    const [hit] = await cache.lookUp(input.accountId, [address]);
    if (hit) {
      const [result] = await finishWithAccount(deps, input.accountId, [hit.result], [history]);
      logVerdict(deps, input.accountId, address, result!);
      return { result: result!, cached: true, checkedAt: hit.checkedAt };
    }
  }
  const { transcript, ...result } = await deps.verifier.verify(address, {
    timeoutMs: input.timeoutMs,
    transcript: input.transcript === true,
  });
  const checkedAt = deps.clock.now();
  await cache?.store(input.accountId, [result], checkedAt);
  const [finished] = await finishWithAccount(deps, input.accountId, [result], [history]);
  logVerdict(deps, input.accountId, address, finished!);
  return {
    result: finished!,
    cached: false,
    checkedAt,
    ...withTranscript(input, transcript ?? []),
  };
}

// Issue 27, part 4: the verdict log's hook (docs/outcomes.md, "How accurate are we?"). Only the
// network's verdicts come here; the account-decided ones above are not predictions.
function logVerdict(
  deps: VerifyDeps,
  accountId: string,
  address: WellFormedAddress,
  result: VerificationResult,
): void {
  const { status, reason, score } = result;
  deps.verdictLog.record(accountId, [
    { email: address, status, reason, score, provider: result.checks.mx.provider },
  ]);
}

function withTranscript(input: VerifyInput, transcript: TranscriptLine[]): { transcript?: TranscriptLine[] } {
  return input.transcript === true ? { transcript } : {};
}
