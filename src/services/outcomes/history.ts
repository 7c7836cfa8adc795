/**
 * What an account's outcomes say about an address, read before any network check (docs/outcomes.md,
 * "Suppression"): one indexed read of the latest event of each type per address.
 *
 * - A hard bounce suppresses: `undeliverable` / `previously_bounced`, unless a proof of delivery
 *   (`delivered`, `opened`, `clicked`) came after it.
 * - A complaint suppresses: `risky` / `complained`. The owner called the mail spam; a later
 *   delivery does not take that back. When an unlifted hard bounce is newer than the complaint,
 *   the bounce decides (the mailbox has gone since).
 * - A soft bounce, an unsubscription or a delivery alone suppress nothing; a proof of delivery
 *   with no bounce after it is evidence (`checks.history.passed: true`).
 */
import type { HistoryCheck, HistoryEvent } from '../../engine/types.js';
import type { Executor } from '../../store/executor.js';
import { latestOutcomes, type LatestOutcome } from '../../store/outcome.store.js';
import { outcomeAddress, type AddressInput } from './address-key.js';
import { PROOF_OF_DELIVERY } from './outcome-types.js';
import { createStoreMemo } from '../store-memo.js';

export type SuppressionReason = 'previously_bounced' | 'complained';

/** What the account's outcomes say about one address. */
export interface AddressHistory {
  /** The latest event of each type, newest first. */
  events: HistoryEvent[];
  /** Set when the address is answered from its history, with no network check. */
  suppression: { reason: SuppressionReason; event: HistoryEvent } | null;
  /** The latest proof of delivery with no hard bounce after it. */
  evidence: HistoryEvent | null;
}

/** An address the account has no outcome for. */
export const NO_HISTORY: AddressHistory = Object.freeze({ events: [], suppression: null, evidence: null });

/**
 * The latest events of addresses read before, kept in memory while the store's change token stays
 * the same (store-memo.ts; `outcome_events` is watched, so any outcome taken or erased anywhere
 * empties it): a verification answered from the result cache reads nothing, as the result cache
 * promises (docs/outcomes.md, "What it costs"). Keyed by address key, which names the account too.
 */
const historyMemo = createStoreMemo<readonly LatestOutcome[]>(50_000);

/** The history of each of `emails` in the account (an unparsable address has none). One read at most. */
export async function historyOf(
  db: Executor,
  accountId: string,
  emails: readonly AddressInput[],
): Promise<AddressHistory[]> {
  const keys = emails.map((email) => {
    const address = outcomeAddress(accountId, email);
    return 'key' in address ? address.key : null;
  });
  const memo = historyMemo.current(db);
  const asked = [...new Set(keys.filter((k): k is string => k !== null))];
  const missing = memo === null ? asked : asked.filter((k) => !memo.entries.has(k));
  const rows = missing.length === 0 ? [] : await latestOutcomes(db, accountId, missing);
  const byKey = new Map<string, LatestOutcome[]>();
  for (const row of rows) {
    const list = byKey.get(row.address_key);
    if (list) list.push(row);
    else byKey.set(row.address_key, [row]);
  }
  if (memo !== null) for (const key of missing) historyMemo.keep(db, memo.token, key, byKey.get(key) ?? []);
  return keys.map((key) => {
    const found = key === null ? undefined : (byKey.get(key) ?? memo?.entries.get(key));
    return found !== undefined && found.length > 0 ? decideHistory(found) : NO_HISTORY;
  });
}

/** The rules above, on the latest event of each type. Pure. */
export function decideHistory(
  latest: readonly Pick<LatestOutcome, 'type' | 'at' | 'source'>[],
): AddressHistory {
  const events = latest
    .map((e): HistoryEvent => ({ type: e.type, at: e.at, source: e.source }))
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.type.localeCompare(b.type)));
  const newest = (pick: (e: HistoryEvent) => boolean): HistoryEvent | null => events.find(pick) ?? null;
  const proof = newest((e) => PROOF_OF_DELIVERY.has(e.type));
  const bounce = newest((e) => e.type === 'hard_bounce');
  const complaint = newest((e) => e.type === 'complaint');
  // A proof of delivery at the same instant as the bounce does not lift it: order is unknown.
  const bounceStands = bounce !== null && (proof === null || proof.at <= bounce.at);
  let suppression: AddressHistory['suppression'] = null;
  if (bounceStands && (complaint === null || bounce.at >= complaint.at))
    suppression = { reason: 'previously_bounced', event: bounce };
  else if (complaint !== null) suppression = { reason: 'complained', event: complaint };
  const evidence = proof !== null && !bounceStands ? proof : null;
  return { events, suppression, evidence };
}

/** `checks.history` for a verification with this history. */
export function historyCheck(history: AddressHistory): HistoryCheck {
  if (history.suppression !== null)
    return { passed: false, events: history.events, decided_by: history.suppression.event };
  if (history.evidence !== null) return { passed: true, events: history.events, decided_by: null };
  return { passed: null, events: history.events, decided_by: null };
}
