/**
 * The verdict log (docs/outcomes.md, "How accurate are we?"): what each account was told about
 * each address by a live verification, single or batch, so that the report can set it against the
 * delivery outcomes that came later. Only the latest verdict per (account, address) is kept, under
 * the address's key (address-key.ts), never the address.
 *
 * Logged: the verdicts the verifier worked out (the network's, from a probe or the result cache,
 * with the account's evidence and calibrated score). Not logged: a test key's, and the verdicts
 * the account's own data decided with no network check (`previously_bounced`, `complained`, the
 * filters'): they restate what the account already knew, and one logged after a bounce would
 * replace the verdict that the bounce proved wrong.
 *
 * Writes are buffered in the process and flushed in one statement per 500 addresses every
 * FLUSH_INTERVAL_MS (or at MAX_PENDING addresses, and on close): a verification costs a hash and a
 * map entry, not a write transaction (bench:outcomes measures it; docs/benchmarks.md). A crash
 * loses at most the last second's verdicts, which only leaves those addresses out of the report.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { SECOND } from '../../clock.js';
import { ACCOUNT_REASONS, type Status } from '../../engine/types.js';
import type { Executor } from '../../store/executor.js';
import type { VerdictLogTable } from '../../store/schema/outcomes.schema.js';
import { deleteVerdictOfAddress, upsertVerdicts } from '../../store/verdict-log.store.js';
import { outcomeAddress, type AddressInput } from './address-key.js';

/** One verdict as the verifier gave it. */
export interface LoggedVerdict {
  /** Parsed already where the caller has it (a single verification): not parsed again. */
  email: AddressInput;
  status: Status;
  reason: string | null;
  score: number;
  /** `checks.mx.provider`. */
  provider: string | null;
}

export interface VerdictLog {
  /** Remembers the account's verdicts (those the log keeps; see above). Never throws, never waits. */
  record(accountId: string, verdicts: readonly LoggedVerdict[]): void;
  /** Writes what is buffered; resolves once it is in the store. */
  flush(): Promise<void>;
  /** Erases the address's verdict in the account, buffered and stored (the right to be forgotten). */
  erase(accountId: string, email: string): Promise<number>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

export interface VerdictLogDeps {
  db: Executor;
  clock: Clock;
  logger: Logger;
  /** Default FLUSH_INTERVAL_MS. */
  flushIntervalMs?: number;
}

export const FLUSH_INTERVAL_MS = SECOND;
export const MAX_PENDING = 2000;

/** Reasons that the account's data decided: not the verifier's prediction. */
const NOT_LOGGED: ReadonlySet<string> = new Set<string>([...ACCOUNT_REASONS, 'test_mode']);

type Row = VerdictLogTable;

export function createVerdictLog(deps: VerdictLogDeps): VerdictLog {
  let pending = new Map<string, Row>();
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  const write = async (rows: Row[]): Promise<void> => {
    try {
      await deps.db.transaction().execute((trx) => upsertVerdicts(trx, rows));
    } catch (err) {
      // Best effort: a lost write leaves those addresses out of the report, nothing else.
      deps.logger.warn({ err, verdicts: rows.length }, 'verdict log: a write failed');
    }
  };
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending.size > 0) {
      const rows = [...pending.values()];
      pending = new Map();
      writing = writing.then(() => write(rows));
    }
    return writing;
  };

  return {
    record(accountId, verdicts) {
      const now = deps.clock.now().toISOString();
      for (const v of verdicts) {
        if (v.reason !== null && NOT_LOGGED.has(v.reason)) continue;
        const address = outcomeAddress(accountId, v.email);
        if ('error' in address) continue;
        const id = `${accountId}\0${address.key}`;
        const reason = v.reason ?? '';
        const held = pending.get(id);
        const same = held !== undefined && held.status === v.status && held.reason === reason;
        pending.set(id, {
          account_id: accountId,
          address_key: address.key,
          status: v.status,
          reason,
          score: v.score,
          provider: v.provider ?? '',
          since: same ? held.since : now,
          verified_at: now,
        });
      }
      if (pending.size >= MAX_PENDING) void flush();
      else if (pending.size > 0 && timer === null) {
        timer = setTimeout(() => void flush(), deps.flushIntervalMs ?? FLUSH_INTERVAL_MS);
        timer.unref();
      }
    },
    flush,
    async erase(accountId, email) {
      await flush();
      const address = outcomeAddress(accountId, email);
      if ('error' in address) return 0;
      return deleteVerdictOfAddress(deps.db, accountId, address.key);
    },
    close: flush,
  };
}
