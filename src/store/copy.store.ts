/**
 * What `mailverdict store copy` needs from the stores: the tables in the order a copy must write
 * them, the source (an embedded SQLite store) opened read-only, and pages of rows read by primary
 * key and written with one upsert each. The SQL is portable except where it reads SQLite's own
 * catalogue, which only the source (always SQLite) is asked.
 */
import { existsSync } from 'node:fs';
import { Kysely, SqliteDialect, sql, type RawBuilder } from 'kysely';
import { databasePath } from './db.js';
import type { Executor } from './executor.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';
import { Sqlite } from './dialect/better-sqlite3.js';

export type TableName = keyof Database;

export interface CopiedTable {
  name: TableName;
  /** The primary key's columns, in the order rows are paged by. */
  key: readonly string[];
  /**
   * Rows per page (one read, one INSERT). Chunk rows carry up to a few hundred KB of text each
   * (the addresses and results of `chunkSize` addresses), so their pages are short: memory stays
   * at two pages whatever the store's size.
   */
  pageSize: number;
}

/**
 * Every table of the schema, parents before children (foreign keys hold after every page).
 * A table added to the schema and not here (nor in RUNTIME_TABLES) fails the type check below, the copy of a store that
 * holds it (see `unknownSourceTables`) and test/cli/store-copy.test.ts.
 */
export const COPIED_TABLES = [
  { name: 'accounts', key: ['id'], pageSize: 500 },
  { name: 'api_keys', key: ['id'], pageSize: 500 },
  { name: 'bootstrap', key: ['id'], pageSize: 500 },
  { name: 'usage_periods', key: ['account_id', 'period_start'], pageSize: 500 },
  { name: 'jobs', key: ['id'], pageSize: 500 },
  { name: 'job_chunks', key: ['job_id', 'seq'], pageSize: 16 },
  { name: 'idempotency_keys', key: ['account_id', 'key'], pageSize: 500 },
  { name: 'job_deliveries', key: ['id'], pageSize: 500 },
  { name: 'job_delivery_attempts', key: ['delivery_id', 'attempt'], pageSize: 500 },
  { name: 'people', key: ['id'], pageSize: 500 },
  { name: 'email_changes', key: ['token_hash'], pageSize: 500 },
  { name: 'members', key: ['id'], pageSize: 500 },
  { name: 'dashboard_sessions', key: ['id'], pageSize: 500 },
  { name: 'member_tokens', key: ['token_hash'], pageSize: 500 },
  { name: 'usage_days', key: ['account_id', 'day'], pageSize: 500 },
  { name: 'api_key_usage', key: ['key_id'], pageSize: 500 },
  { name: 'api_key_days', key: ['key_id', 'day'], pageSize: 500 },
  { name: 'list_uploads', key: ['id'], pageSize: 500 },
  // Like chunks: a row holds the other cells of a chunk's worth of uploaded rows.
  { name: 'list_upload_rows', key: ['upload_id', 'seq'], pageSize: 16 },
  { name: 'job_result_counts', key: ['job_id'], pageSize: 500 },
  { name: 'sign_in_failures', key: ['key', 'window_start'], pageSize: 500 },
  { name: 'member_two_factor', key: ['person_id'], pageSize: 500 },
  { name: 'member_recovery_codes', key: ['code_hash'], pageSize: 500 },
  { name: 'sign_in_challenges', key: ['id'], pageSize: 500 },
  { name: 'audit_log', key: ['id'], pageSize: 500 },
  { name: 'list_schedules', key: ['list_id'], pageSize: 500 },
  // Like chunks: a kept part of a scheduled list (addresses, cells, verdicts).
  { name: 'list_schedule_rows', key: ['list_id', 'seq'], pageSize: 16 },
  { name: 'list_runs', key: ['id'], pageSize: 500 },
  { name: 'list_run_changes', key: ['job_id', 'part'], pageSize: 16 },
  { name: 'outcome_events', key: ['id'], pageSize: 500 },
  { name: 'account_filters', key: ['id'], pageSize: 500 },
  { name: 'outcome_sources', key: ['id'], pageSize: 500 },
  { name: 'outcome_hook_nonces', key: ['source_id', 'nonce'], pageSize: 500 },
  { name: 'verdict_log', key: ['account_id', 'address_key'], pageSize: 500 },
] as const satisfies readonly CopiedTable[];

/**
 * Tables of runtime state that a copy leaves behind: the worker processes of the source's
 * deployment (migration 0013) would read as lost workers on the target.
 */
export const RUNTIME_TABLES = ['workers'] as const satisfies readonly TableName[];

type Unlisted = Exclude<TableName, (typeof COPIED_TABLES)[number]['name'] | (typeof RUNTIME_TABLES)[number]>;
// Fails to compile, naming the table, when Database gains one that COPIED_TABLES does not list.
const _everyTableListed: [Unlisted] extends [never] ? true : `not in COPIED_TABLES: ${Unlisted}` = true;

/** Tables of the store that hold no product data (Kysely's migration bookkeeping, SQLite's own). */
const BOOKKEEPING_TABLES = new Set(['kysely_migration', 'kysely_migration_lock', 'sqlite_sequence']);

/** How long a read waits on another process's lock (a checkpoint, a recovery) before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the SQLite store of `dataDir` read-only: the copy can change none of its rows (SQLite may
 * leave the WAL mode's `-wal` and `-shm` files beside it), and a `serve` using it meanwhile keeps
 * working. Undefined when the directory holds no store (nothing is created there).
 */
export function openSqliteSource(dataDir: string): Kysely<Database> | undefined {
  const file = databasePath(dataDir);
  if (!existsSync(file)) return undefined;
  const sqlite = new Sqlite(file, { readonly: true, fileMustExist: true });
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // A plain SqliteDialect: transactions begin DEFERRED, so one read transaction is one snapshot
  // and takes no write lock (the store's own dialect begins IMMEDIATE, for writers).
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}

/** The SQLite source's tables that hold data but that COPIED_TABLES does not know. */
export async function unknownSourceTables(source: Executor): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
    source,
  );
  const known = new Set<string>([...COPIED_TABLES.map((t) => t.name), ...RUNTIME_TABLES]);
  return rows.map((r) => r.name).filter((name) => !known.has(name) && !BOOKKEEPING_TABLES.has(name));
}

export interface MigrationState {
  /** Migrations this code knows that the store has not run. */
  pending: string[];
  /** Migrations the store has run that this code does not know (a newer mailverdict wrote it). */
  unknown: string[];
}

/** Where the SQLite source stands against this code's migrations; reads only. */
export async function sqliteMigrationState(source: Executor): Promise<MigrationState> {
  const { rows: tables } = await sql<{ n: number }>`
    select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(
    source,
  );
  const ran =
    (tables[0]?.n ?? 0) === 0
      ? new Set<string>()
      : new Set(
          (await sql<{ name: string }>`select name from kysely_migration`.execute(source)).rows.map(
            (r) => r.name,
          ),
        );
  const known = Object.keys(migrations).sort();
  return {
    pending: known.filter((name) => !ran.has(name)),
    unknown: [...ran].filter((name) => !known.includes(name)).sort(),
  };
}

export async function countRows(db: Executor, table: TableName): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(
    db,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Whether any table of COPIED_TABLES holds a row. */
export async function holdsAnyRow(db: Executor): Promise<boolean> {
  for (const { name } of COPIED_TABLES) {
    const { rows } = await sql<{ one: number }>`select 1 as one from ${sql.table(name)} limit 1`.execute(db);
    if (rows.length > 0) return true;
  }
  return false;
}

export type Row = Record<string, unknown>;

/**
 * The table's rows in primary-key order, one page at a time (keyset pagination: each page starts
 * after the last key of the one before, so no page rescans what was read).
 */
export async function* readPages(db: Executor, table: CopiedTable): AsyncGenerator<Row[]> {
  const keys = sql.join(table.key.map((c) => sql.ref(c)));
  let after: unknown[] | null = null;
  for (;;) {
    const where: RawBuilder<unknown> =
      after === null ? sql`` : sql`where (${keys}) > (${sql.join(after.map((v) => sql`${v}`))})`;
    const { rows } = await sql<Row>`
      select * from ${sql.table(table.name)} ${where} order by ${keys} limit ${table.pageSize}`.execute(db);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < table.pageSize) return;
    const last = rows[rows.length - 1]!;
    after = table.key.map((c) => last[c]);
  }
}

/**
 * Writes `rows` with one INSERT (one implicit transaction): a row whose primary key is already
 * there takes the values given, so writing the same rows twice leaves the same table.
 */
export async function upsertRows(db: Executor, table: CopiedTable, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const updated = columns.filter((c) => !table.key.includes(c));
  const values = sql.join(rows.map((row) => sql`(${sql.join(columns.map((c) => sql`${row[c]}`))})`));
  const onConflict =
    updated.length === 0
      ? sql`do nothing`
      : sql`do update set ${sql.join(updated.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}`;
  await sql`
    insert into ${sql.table(table.name)} (${sql.join(columns.map((c) => sql.ref(c)))})
    values ${values}
    on conflict (${sql.join(table.key.map((c) => sql.ref(c)))}) ${onConflict}`.execute(db);
}
