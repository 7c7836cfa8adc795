/**
 * What the account's outcomes add to a network verdict (docs/outcomes.md, "Evidence" and "The
 * calibrated score"):
 *
 * - **Evidence.** A `risky` / `catch_all` address with a delivery, open or click of its own in the
 *   last EVIDENCE_MAX_AGE_MS (and no hard bounce after it) is `deliverable`: the domain accepts
 *   everything, but this mailbox was shown to receive.
 * - **Calibrated score.** Otherwise a `catch_all` verdict's score comes from the account's
 *   deliveries and hard bounces at the domain, a Beta-Binomial estimate with a prior per provider:
 *   p = (delivered + alpha) / (delivered + bounced + alpha + beta), score = 20 + 39 p (less the
 *   role and free penalties), so it stays in the risky band (10-59) and only `deliverable` reaches
 *   60. With no events it is the prior's mean: 55 for the default prior, today's score.
 * - An `unknown` verdict gets the same figures in `checks.history.domain`, its status unchanged.
 */
import { DAY } from '../../clock.js';
import type { Provider, VerificationResult } from '../../engine/types.js';
import { BASE_SCORES, FLAG_PENALTIES } from '../../engine/verdict.js';
import type { Executor } from '../../store/executor.js';
import { domainOutcomeCounts, type DomainOutcomeCounts } from '../../store/outcome.store.js';
import { historyCheck, type AddressHistory } from './history.js';

/** How old a proof of delivery may be and still make a catch-all address deliverable. */
export const EVIDENCE_MAX_AGE_MS = 180 * DAY;

/**
 * The prior of each provider: Beta(alpha, beta), of strength 10. Chosen, not measured: an
 * accept-all domain behind a security gateway (Proofpoint, Mimecast, Barracuda) or a Microsoft 365
 * tenant hides more dead mailboxes than the default. The account's own outcomes outweigh it after
 * a few dozen sends.
 */
export const PROVIDER_PRIORS: Readonly<Partial<Record<Provider, { alpha: number; beta: number }>>> = {
  microsoft: { alpha: 8.5, beta: 1.5 },
  proofpoint: { alpha: 8, beta: 2 },
  mimecast: { alpha: 8, beta: 2 },
  barracuda: { alpha: 8, beta: 2 },
};
export const DEFAULT_PRIOR = { alpha: 9, beta: 1 } as const;

/** Which domains' counts the results need (catch_all and unknown verdicts). */
export function domainsNeeded(results: readonly VerificationResult[]): string[] {
  const domains = new Set<string>();
  for (const r of results)
    if ((r.reason === 'catch_all' || r.status === 'unknown') && r.checks.syntax.domain !== null)
      domains.add(r.checks.syntax.domain);
  return [...domains];
}

export async function domainCounts(
  db: Executor,
  accountId: string,
  domains: readonly string[],
): Promise<Map<string, DomainOutcomeCounts>> {
  const rows = await domainOutcomeCounts(db, accountId, domains);
  return new Map(rows.map((r) => [r.domain, r]));
}

/** `result` with `checks.history`, the evidence and the calibrated score applied. Pure. */
export function withEvidence(
  result: VerificationResult,
  history: AddressHistory,
  counts: ReadonlyMap<string, DomainOutcomeCounts>,
  now: Date,
): VerificationResult {
  const check = historyCheck(history);
  const evidence = history.evidence;
  const role = result.checks.roleAddress.value;
  const free = result.checks.freeProvider.value;
  if (
    result.reason === 'catch_all' &&
    evidence !== null &&
    now.getTime() - Date.parse(evidence.at) <= EVIDENCE_MAX_AGE_MS
  ) {
    const penalty = FLAG_PENALTIES.deliverable;
    return {
      ...result,
      status: 'deliverable',
      reason: null,
      valid: true,
      score: BASE_SCORES.deliverable - (role ? penalty.role : 0) - (free ? penalty.free : 0),
      checks: { ...result.checks, history: { ...check, decided_by: evidence } },
    };
  }
  if (result.reason !== 'catch_all' && result.status !== 'unknown')
    return { ...result, checks: { ...result.checks, history: check } };
  const domain = result.checks.syntax.domain;
  const found = domain === null ? undefined : counts.get(domain);
  const provider = result.checks.mx.provider;
  const prior = (provider === null ? undefined : PROVIDER_PRIORS[provider]) ?? DEFAULT_PRIOR;
  const delivered = found?.delivered ?? 0;
  const bounced = found?.hardBounces ?? 0;
  const estimate = (delivered + prior.alpha) / (delivered + bounced + prior.alpha + prior.beta);
  const withDomain = {
    ...check,
    domain: {
      delivered,
      hard_bounces: bounced,
      prior: { provider, alpha: prior.alpha, beta: prior.beta },
      estimate: Math.round(estimate * 1000) / 1000,
    },
  };
  if (result.reason !== 'catch_all') return { ...result, checks: { ...result.checks, history: withDomain } };
  const penalty = FLAG_PENALTIES.risky;
  const score = Math.round(20 + 39 * estimate) - (role ? penalty.role : 0) - (free ? penalty.free : 0);
  return { ...result, score, checks: { ...result.checks, history: withDomain } };
}
