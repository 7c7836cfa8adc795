/**
 * The SQLite driver: Kysely's, with transactions that begin IMMEDIATE and tell the work watch
 * when they end.
 */
import { CompiledQuery, SqliteDriver, type DatabaseConnection, type SqliteDialectConfig } from 'kysely';

/** How long a writer waits for another process's write lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/** Longest pause between two tries for the write lock at the start of a transaction. */
const BEGIN_RETRY_MAX_PAUSE_MS = 20;

/**
 * How long a job that writes a large whole in steps (a scheduled list's copy and comparison)
 * pauses between its transactions on SQLite. SQLite's lock is not a queue: a writer waiting for
 * it asks again after a pause (at most BEGIN_RETRY_MAX_PAUSE_MS here), and steps that follow each
 * other at once starve it; a pause a little longer than that lets it in.
 */
export const STEP_PAUSE_MS = BEGIN_RETRY_MAX_PAUSE_MS + 5;

function isBusy(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'SQLITE_BUSY';
}

/**
 * Transactions begin IMMEDIATE, taking the write lock up front. A deferred transaction that reads
 * and then writes fails at once with SQLITE_BUSY (the busy timeout does not apply to the upgrade)
 * when another process (`serve` and a separate `worker`) committed in between; an immediate one
 * waits for the lock instead, up to BUSY_TIMEOUT_MS.
 *
 * That wait is done here, asking again after short pauses, rather than by busy_timeout: SQLite's
 * own wait blocks the thread, so the event loop stood still while another connection held the
 * lock, and when that connection was this process's own (a transaction between two awaits, as
 * the store tests' several "processes" in one are), it could not finish and the wait always ran
 * out (60 concurrent counts of the quota on 4 connections: 8 counted, 263 s).
 */
export class ImmediateTransactionDriver extends SqliteDriver {
  readonly #ended: (committed: boolean) => void;
  readonly #setBusyTimeout: (ms: number) => void;

  constructor(
    config: SqliteDialectConfig,
    ended: (committed: boolean) => void,
    setBusyTimeout: (ms: number) => void,
  ) {
    super(config);
    this.#ended = ended;
    this.#setBusyTimeout = setBusyTimeout;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const deadline = performance.now() + BUSY_TIMEOUT_MS;
    for (let pause = 1; ; pause = Math.min(2 * pause, BEGIN_RETRY_MAX_PAUSE_MS)) {
      // better-sqlite3 runs the statement synchronously inside executeQuery, so the timeout is
      // back before any other statement of this connection can run.
      this.#setBusyTimeout(0);
      try {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
        return;
      } catch (err) {
        if (!isBusy(err) || performance.now() >= deadline) throw err;
      } finally {
        this.#setBusyTimeout(BUSY_TIMEOUT_MS);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    this.#ended(true);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await super.rollbackTransaction(connection);
    this.#ended(false);
  }
}
