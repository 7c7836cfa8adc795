/**
 * Moves an embedded SQLite store to PostgreSQL (`mailverdict store copy`, docs/scaling.md):
 * accounts, key hashes, usage, webhook secrets, jobs with their chunks, idempotency keys and the
 * delivery outbox, row for row, so that every key keeps working and no job is lost.
 *
 * - The source is read in one read transaction: one consistent snapshot, even while a `serve`
 *   writes to it (what it writes after the snapshot is not copied; a second run takes it).
 * - The target is migrated to the latest schema first, and refused when it already holds data
 *   unless `force`.
 * - Tables go parents first, in pages by primary key, each page one INSERT ... ON CONFLICT (primary
 *   key) DO UPDATE: a row already in the target takes the source's values, so running the copy
 *   again completes an interrupted one and changes nothing after a complete one.
 */
import { AppError } from '../../errors.js';
import {
  COPIED_TABLES,
  countRows,
  holdsAnyRow,
  readPages,
  sqliteMigrationState,
  unknownSourceTables,
  upsertRows,
  type TableName,
} from '../../store/copy.store.js';
import type { Executor } from '../../store/executor.js';
import { migrateToLatest } from '../../store/migrate.js';

export interface StoreCopyDeps {
  /** The SQLite store to read (store/copy.store.ts `openSqliteSource`: read-only). */
  source: Executor;
  /** The PostgreSQL store to write (store/db.ts `openDatabase`). */
  target: Executor;
  /** Told after each page written. */
  onProgress?: (progress: StoreCopyProgress) => void;
}

export interface StoreCopyProgress {
  table: TableName;
  /** Rows of `table` written so far, and in all. */
  tableCopied: number;
  tableRows: number;
  /** Rows of every table written so far, and in all. */
  copied: number;
  rows: number;
}

export interface StoreCopySummary {
  /** Rows copied per table, in the order they were copied. */
  tables: Record<TableName, number>;
  rows: number;
  /** Migrations this copy ran on the target first (none when it was up to date). */
  targetMigrationsApplied: string[];
}

/**
 * Copies the source store into the target (see the module comment). Throws AppError
 * `invalid_request` when the source is not at this version's latest migration or holds a table
 * this version does not know, and when the target holds data and `force` is not set.
 */
export async function copyStore(deps: StoreCopyDeps, input: { force: boolean }): Promise<StoreCopySummary> {
  const { source, target } = deps;
  return source.transaction().execute(async (snapshot) => {
    await assertSourceCopyable(snapshot);
    const { applied } = await migrateToLatest(target);
    if (!input.force && (await holdsAnyRow(target)))
      throw new AppError(
        'invalid_request',
        'the target PostgreSQL store already holds data; pass --force to copy into it anyway ' +
          '(rows with the same primary key take the source values, other rows stay)',
      );

    const counts: number[] = [];
    for (const table of COPIED_TABLES) counts.push(await countRows(snapshot, table.name));
    const rows = counts.reduce((a, b) => a + b, 0);
    const tables = {} as Record<TableName, number>;
    let copied = 0;
    for (const [i, table] of COPIED_TABLES.entries()) {
      let tableCopied = 0;
      for await (const page of readPages(snapshot, table)) {
        try {
          await upsertRows(target, table, page);
        } catch (err) {
          throw new Error(
            `copying ${table.name} failed: ${err instanceof Error ? err.message : String(err)}`,
            { cause: err },
          );
        }
        tableCopied += page.length;
        copied += page.length;
        deps.onProgress?.({ table: table.name, tableCopied, tableRows: counts[i]!, copied, rows });
      }
      tables[table.name] = tableCopied;
    }
    return { tables, rows: copied, targetMigrationsApplied: applied };
  });
}

async function assertSourceCopyable(source: Executor): Promise<void> {
  const { pending, unknown } = await sqliteMigrationState(source);
  if (unknown.length > 0)
    throw new AppError(
      'invalid_request',
      `the source store was migrated by a newer mailverdict (${unknown.join(', ')}); copy it with that version`,
    );
  if (pending.length > 0)
    throw new AppError(
      'invalid_request',
      `the source store is not at the latest schema (missing ${pending.join(', ')}); ` +
        'run `mailverdict migrate --data-dir <dir>` on it first',
    );
  const strangers = await unknownSourceTables(source);
  if (strangers.length > 0)
    throw new AppError(
      'invalid_request',
      `the source store holds tables this copy does not know (${strangers.join(', ')}); nothing was copied`,
    );
}
