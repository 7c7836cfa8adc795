/**
 * Verdicts that rest on the account's own data rather than on the network (docs/outcomes.md):
 * built on the engine's offline verification (syntax and the list flags, nothing sent), scored
 * with the engine's table so that the bands of docs/verdicts.md hold.
 */
import { BASE_SCORES, FLAG_PENALTIES, STATUS_OF } from '../../engine/verdict.js';
import type { Reason, VerificationResult } from '../../engine/types.js';
import { historyCheck, type AddressHistory } from './history.js';

/** The reasons only the account's data decides. */
export type AccountReason = Extract<
  Reason,
  'previously_bounced' | 'complained' | 'blocked_by_filter' | 'allowed_by_filter'
>;

/** `offline` (the engine's verifyOffline of the address) answered with `reason`, no network check run. */
export function accountVerdict(
  offline: VerificationResult,
  reason: AccountReason,
  extraChecks: Partial<VerificationResult['checks']> = {},
): VerificationResult {
  const status = STATUS_OF[reason];
  const penalty = FLAG_PENALTIES[status];
  const score =
    BASE_SCORES[reason] -
    (offline.checks.roleAddress.value ? penalty.role : 0) -
    (offline.checks.freeProvider.value ? penalty.free : 0);
  return {
    ...offline,
    status,
    reason,
    valid: status === 'deliverable',
    score,
    checks: { ...offline.checks, ...extraChecks },
  };
}

/** The verdict of a suppressed address (history.suppression set). */
export function suppressedResult(offline: VerificationResult, history: AddressHistory): VerificationResult {
  const reason = history.suppression?.reason;
  if (reason === undefined) throw new Error('suppressedResult: the address is not suppressed');
  return accountVerdict(offline, reason, { history: historyCheck(history) });
}
