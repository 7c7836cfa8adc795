/**
 * The account's own data, asked before any network check (docs/outcomes.md): its filters first
 * (the most specific match wins; an `mx` filter needs the MX look-up, nothing more), then its
 * delivery outcomes (a hard bounce or a complaint suppresses). Single verifications and batch jobs
 * both come here, for one address or a group, with one read of each.
 */
import type { VerificationResult, Verifier } from '../../engine/types.js';
import type { Executor } from '../../store/executor.js';
import type { AccountFilterRow } from '../../store/schema/outcomes.schema.js';
import { accountVerdict, suppressedResult } from './account-verdict.js';
import { filterSetFor } from './filters.service.js';
import { historyOf, NO_HISTORY, type AddressHistory } from './history.js';
import { domainCounts, domainsNeeded, withEvidence } from './evidence.js';
import type { Clock } from '../../clock.js';
import { createStoreMemo } from '../store-memo.js';
import { textOf, type AddressInput } from './address-key.js';

/** Either the answer, decided by the account's data, or the history to show beside the network's. */
export type AccountDecision = { result: VerificationResult } | { history: AddressHistory };

/** The account's data around the network verification of a group of addresses. */
export interface AccountData {
  /** What the account's data decides for each of `emails`, before any network check. */
  decide(accountId: string, emails: readonly AddressInput[]): Promise<AccountDecision[]>;
  /** The network's results (cached or probed) with the account's evidence (services/outcomes/evidence.ts). */
  finish(
    accountId: string,
    results: readonly VerificationResult[],
    histories: readonly AddressHistory[],
  ): Promise<VerificationResult[]>;
}

export interface AccountDataDeps {
  db: Executor;
  clock: Clock;
  verifier: Pick<Verifier, 'verifyOffline' | 'verifyMailHosts'>;
}

/** MX look-ups run at once for a group's addresses that only an `mx` filter could decide. */
const MX_LOOKUPS_AT_ONCE = 32;

function filterVerdict(base: VerificationResult, filter: AccountFilterRow): VerificationResult {
  return accountVerdict(base, filter.action === 'allow' ? 'allowed_by_filter' : 'blocked_by_filter', {
    filter: {
      passed: filter.action === 'allow',
      id: filter.id,
      action: filter.action,
      match: filter.match,
      value: filter.value,
    },
  });
}

/**
 * The addresses the account's data left to the network (no filter decided them, no outcome
 * suppressed them), with their history, by account and address as given, kept while the store's
 * change token stays the same (store-memo.ts: filters and outcomes are watched). A verification
 * answered from the result cache then asks nothing of the store and parses nothing again
 * (docs/outcomes.md, "What it costs"). Not kept for an account with `mx` filters: its addresses'
 * decisions rest on DNS answers too.
 */
const openMemo = createStoreMemo<AddressHistory>(50_000);
const openKey = (accountId: string, email: AddressInput): string => `${accountId}\0${textOf(email)}`;

export async function decideByAccount(
  deps: AccountDataDeps,
  accountId: string,
  emails: readonly AddressInput[],
): Promise<AccountDecision[]> {
  const memo = openMemo.current(deps.db);
  if (memo !== null) {
    const kept = emails.map((email) => memo.entries.get(openKey(accountId, email)));
    if (kept.every((history) => history !== undefined)) return kept.map((history) => ({ history }));
  }
  const decided = new Array<VerificationResult | undefined>(emails.length);
  const filters = await filterSetFor(deps.db, accountId, emails);
  const needMx: number[] = [];
  emails.forEach((email, i) => {
    const filter = filters.match(email);
    if (filter !== null) decided[i] = filterVerdict(deps.verifier.verifyOffline(textOf(email)), filter);
    else if (filters.hasMx) needMx.push(i);
  });
  for (let start = 0; start < needMx.length; start += MX_LOOKUPS_AT_ONCE) {
    const group = needMx.slice(start, start + MX_LOOKUPS_AT_ONCE);
    const looked = await Promise.all(group.map((i) => deps.verifier.verifyMailHosts(textOf(emails[i]!))));
    group.forEach((i, k) => {
      const result = looked[k]!;
      const filter = filters.matchMx(result.checks.mx.records);
      if (filter !== null) decided[i] = filterVerdict(result, filter);
    });
  }
  const open = emails.flatMap((_, i) => (decided[i] === undefined ? [i] : []));
  const histories = await historyOf(
    deps.db,
    accountId,
    open.map((i) => emails[i]!),
  );
  const out: AccountDecision[] = emails.map((_, i) => ({ result: decided[i]! }));
  open.forEach((i, k) => {
    const history = histories[k]!;
    out[i] =
      history.suppression === null
        ? { history }
        : { result: suppressedResult(deps.verifier.verifyOffline(textOf(emails[i]!)), history) };
    if (memo !== null && !filters.hasMx && history.suppression === null)
      openMemo.keep(deps.db, memo.token, openKey(accountId, emails[i]!), history);
  });
  return out;
}

/** The network's results with the account's evidence: one read of the domains' counts when a verdict needs them. */
export async function finishWithAccount(
  deps: Pick<AccountDataDeps, 'db' | 'clock'>,
  accountId: string,
  results: readonly VerificationResult[],
  histories: readonly AddressHistory[],
): Promise<VerificationResult[]> {
  if (results.length === 0) return [];
  const counts = await domainCounts(deps.db, accountId, domainsNeeded(results));
  const now = deps.clock.now();
  return results.map((result, i) => withEvidence(result, histories[i] ?? NO_HISTORY, counts, now));
}

/** The account's data on a store and an engine. */
export function accountLookup(deps: AccountDataDeps): AccountData {
  return {
    decide: (accountId, emails) => decideByAccount(deps, accountId, emails),
    finish: (accountId, results, histories) => finishWithAccount(deps, accountId, results, histories),
  };
}
