/**
 * Taking delivery outcomes in (docs/outcomes.md, "Taking outcomes in"): each event is checked on
 * its own (a refused one is answered with its index and why, the others are taken); the events
 * taken are stored in one transaction, so a failure stores none of them; an event the account
 * already holds (same address, type, time and source id) is counted as a duplicate and changes
 * nothing. After the commit, the result cache forgets the addresses: their next verification is
 * worked out again with the new history.
 *
 * The addresses never reach the log: the route logs counts only.
 */
import type { Clock } from '../../clock.js';
import { MINUTE } from '../../clock.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import { deleteOutcomesOfAddress, insertOutcomeEvents } from '../../store/outcome.store.js';
import type { OutcomeEventsTable } from '../../store/schema/outcomes.schema.js';
import type { Insertable } from 'kysely';
import { AppError } from '../../errors.js';
import { randomBase62 } from '../ids.js';
import type { ResultCache } from '../verify/result-cache.js';
import { outcomeAddress } from './address-key.js';
import { isOutcomeType, OUTCOME_TYPES, type OutcomeSource } from './outcome-types.js';
import type { VerdictLog } from './verdict-log.js';

/** Events one request may carry. */
export const MAX_EVENTS_PER_REQUEST = 10_000;
/** How far ahead of the server's clock an event's time may be (clock skew), not more. */
export const MAX_FUTURE_SKEW_MS = 5 * MINUTE;
export const MAX_DETAIL_LENGTH = 300;
export const MAX_SOURCE_ID_LENGTH = 200;
/** The largest body of events (a request's JSON, an uploaded file): 10,000 events of the longest fields fit. */
export const OUTCOMES_FILE_LIMIT = 8 * 1024 * 1024;

export interface OutcomeEventInput {
  email: string;
  type: string;
  /** ISO 8601 with a time zone; absent: now. */
  at?: string;
  detail?: string;
  /** The sender's own id of the event, part of its identity (idempotency). */
  source_id?: string;
}

/** Why an event was refused (docs/outcomes.md, "Refusals"). */
export type RefusalReason = 'invalid_email' | 'invalid_type' | 'invalid_at' | 'expired' | 'invalid_source_id';

export interface Refusal {
  index: number;
  reason: RefusalReason;
  message: string;
}

export interface IntakeReport {
  /** Events accepted: stored now, or already held. */
  taken: number;
  /** Of those, events the account already held (nothing changed). */
  duplicates: number;
  refused: number;
  refusals: Refusal[];
}

export interface IntakeDeps {
  db: Executor;
  clock: Clock;
  /** How long events are kept (config.outcomeRetentionMs): an older one is refused as `expired`. */
  retentionMs: number;
  /** Emptied of the addresses taken; absent or null: no cache. */
  resultCache?: ResultCache | null;
}

export interface IntakeInput {
  accountId: string;
  source: OutcomeSource;
  events: readonly OutcomeEventInput[];
  /** true: check and answer, store nothing (a test key). */
  dryRun?: boolean;
  /**
   * The rest of the caller's use case, in the intake's transaction after the events are stored: a
   * suspension check, the security-log entry with the counts. Throwing rolls the events back.
   */
  alongside?: (
    trx: Executor,
    counts: { taken: number; duplicates: number; refused: number },
  ) => Promise<void>;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]+/g;
// eslint-disable-next-line no-control-regex
const HAS_CONTROL = /[\u0000-\u001f\u007f]/;

/** Checks and stores `input.events` (at most MAX_EVENTS_PER_REQUEST). */
export async function takeOutcomes(deps: IntakeDeps, input: IntakeInput): Promise<IntakeReport> {
  if (input.events.length > MAX_EVENTS_PER_REQUEST)
    throw new AppError(
      'invalid_request',
      `at most ${MAX_EVENTS_PER_REQUEST} events per request, got ${input.events.length}; split them`,
    );
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const oldest = now.getTime() - deps.retentionMs;
  const refusals: Refusal[] = [];
  const rows: Insertable<OutcomeEventsTable>[] = [];
  const emails: string[] = [];
  input.events.forEach((event, index) => {
    const refuse = (reason: RefusalReason, message: string): void =>
      void refusals.push({ index, reason, message });
    const address = outcomeAddress(input.accountId, event.email);
    if ('error' in address) return refuse('invalid_email', `the address is malformed: ${address.error}`);
    if (!isOutcomeType(event.type))
      return refuse('invalid_type', `unknown type; one of ${OUTCOME_TYPES.join(', ')}`);
    let at = nowIso;
    if (event.at !== undefined) {
      const time = ISO_TIME.test(event.at) ? Date.parse(event.at) : NaN;
      if (Number.isNaN(time))
        return refuse('invalid_at', 'not an ISO 8601 time with a time zone (2026-03-10T12:00:00Z)');
      if (time > now.getTime() + MAX_FUTURE_SKEW_MS) return refuse('invalid_at', 'the time is in the future');
      if (time < oldest)
        return refuse('expired', 'older than the outcome retention; it would be deleted at once');
      at = new Date(time).toISOString();
    }
    const sourceId = event.source_id ?? '';
    if (sourceId.length > MAX_SOURCE_ID_LENGTH || HAS_CONTROL.test(sourceId))
      return refuse('invalid_source_id', `at most ${MAX_SOURCE_ID_LENGTH} printable characters`);
    const detail = event.detail?.replace(CONTROL, ' ').trim().slice(0, MAX_DETAIL_LENGTH) || null;
    rows.push({
      id: '',
      account_id: input.accountId,
      address_key: address.key,
      domain: address.domain,
      type: event.type,
      at,
      source: input.source,
      source_id: sourceId,
      detail,
      created_at: nowIso,
    });
    emails.push(event.email);
  });
  // One draw from the CSPRNG for every id: 10,000 draws of 32 bytes cost more than the inserts.
  const random = randomBase62(16 * rows.length);
  rows.forEach((row, i) => (row.id = `out_${random.slice(16 * i, 16 * (i + 1))}`));
  if (input.dryRun === true) return { taken: rows.length, duplicates: 0, refused: refusals.length, refusals };
  const alongside = input.alongside;
  const stored =
    rows.length === 0 && alongside === undefined
      ? 0
      : await inTransaction(deps.db, async (trx) => {
          const inserted = rows.length === 0 ? 0 : await insertOutcomeEvents(trx, rows);
          await alongside?.(trx, {
            taken: rows.length,
            duplicates: rows.length - inserted,
            refused: refusals.length,
          });
          return inserted;
        });
  // After the commit: a verification in between must not cache the old verdict again.
  if (stored > 0) await deps.resultCache?.forget(input.accountId, emails);
  return { taken: rows.length, duplicates: rows.length - stored, refused: refusals.length, refusals };
}

/**
 * Erases an address's outcomes in the account (the right to be forgotten), and the verdict the
 * account was last given for it (the verdict log); returns how many events.
 */
export async function eraseOutcomes(
  deps: Pick<IntakeDeps, 'db' | 'resultCache'> & { verdictLog: VerdictLog },
  input: { accountId: string; email: string },
): Promise<number> {
  const address = outcomeAddress(input.accountId, input.email);
  if ('error' in address)
    throw new AppError('invalid_email_format', `the address is malformed: ${address.error}`);
  const deleted = await deleteOutcomesOfAddress(deps.db, input.accountId, address.key);
  await deps.verdictLog.erase(input.accountId, input.email);
  await deps.resultCache?.forget(input.accountId, [input.email]);
  return deleted;
}
