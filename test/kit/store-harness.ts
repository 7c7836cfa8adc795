/**
 * A migrated store on each backend the tests can reach: a real SQLite file in a temp directory
 * always, and PostgreSQL when MAILVERDICT_TEST_DATABASE_URL names one (each store in a schema of
 * its own, dropped on close, so runs never see each other). Without that variable the PostgreSQL
 * cases are skipped with one printed line.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase, type StoreSettings } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import { schemaTemplate } from './schema-template.js';

export type BackendName = 'sqlite' | 'postgres';

export interface TestStore {
  backend: BackendName;
  /** The SQLite data directory (a temp directory for PostgreSQL too: some callers write files there). */
  dir: string;
  /** What opens this same store again, as another process would. */
  settings: StoreSettings;
  db: Kysely<Database>;
  /** Another connection (pool) to the same store, migrated; closed with the store. */
  openAnother(): Promise<Kysely<Database>>;
  close(): Promise<void>;
}

export const TEST_DATABASE_URL = process.env.MAILVERDICT_TEST_DATABASE_URL || null;

/**
 * The secret key of test stores on PostgreSQL, where every process must be given one
 * (docs/security.md, "Secrets at rest"); SQLite stores make their own in the data directory.
 */
export const TEST_SECRET_KEY = 'bWFpbHZlcmRpY3QgdGVzdCBzZWNyZXQga2V5IDMyISE=';
/** The settings that give a process TEST_SECRET_KEY. */
export const TEST_SECRETS = { key: TEST_SECRET_KEY, keyFile: null, previousKey: null, previousKeyFile: null };

let skipNoticePrinted = false;
/** The backends to run store tests on; prints once why PostgreSQL is left out when it is. */
export function testBackends(): BackendName[] {
  if (TEST_DATABASE_URL !== null) return ['sqlite', 'postgres'];
  if (!skipNoticePrinted) {
    skipNoticePrinted = true;
    console.log('PostgreSQL store tests skipped: MAILVERDICT_TEST_DATABASE_URL is not set (.ci/run sets it)');
  }
  return ['sqlite'];
}

/**
 * A fresh schema on the test PostgreSQL server, and the URL that selects it. The global teardown
 * (test/global-setup.ts) drops the run's schemas.
 *
 * `migrated`: the schema already holds every migration, copied from the run's template (a schema
 * the global setup migrated once and dumped with pg_dump: test/kit/schema-template.ts), which
 * takes one statement batch instead of the 22 migrations a store would run at its first start
 * (about a third of a second of both cores each, for every API and dashboard test on the
 * PostgreSQL pass). Without a template (no pg_dump here) it is migrated as a process would.
 */
export async function createTestSchema(
  options: { migrated?: boolean } = {},
): Promise<{ schema: string; url: string }> {
  if (TEST_DATABASE_URL === null) throw new Error('MAILVERDICT_TEST_DATABASE_URL is not set');
  const schema = `mv_test_${process.env.MAILVERDICT_TEST_RUN_ID ?? 'x'}_${randomBytes(6).toString('hex')}`;
  const template = options.migrated === true ? schemaTemplate() : null;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(template === null ? `create schema ${schema}` : template.forSchema(schema));
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  if (options.migrated === true && template === null) {
    const db = openDatabase({ dataDir: tmpdir(), databaseUrl: url.toString(), secrets: TEST_SECRETS });
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
  }
  return { schema, url: url.toString() };
}

export async function openTestStore(backend: BackendName = 'sqlite'): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-store-'));
  const pgSchema = backend === 'postgres' ? await createTestSchema({ migrated: true }) : null;
  const settings: StoreSettings =
    pgSchema === null
      ? { dataDir: dir }
      : { dataDir: dir, databaseUrl: pgSchema.url, databasePoolSize: 10, secrets: TEST_SECRETS };
  const db = openDatabase(settings);
  await migrateToLatest(db);
  const others: Kysely<Database>[] = [];
  return {
    backend,
    dir,
    settings,
    db,
    async openAnother() {
      const other = openDatabase(settings);
      others.push(other);
      await migrateToLatest(other);
      return other;
    },
    async close() {
      for (const o of others) await o.destroy();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The tables of the store's schema, whatever the backend. */
export async function tableNames(store: TestStore): Promise<string[]> {
  const rows =
    store.backend === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.db)
      : await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
          store.db,
        );
  return rows.rows.map((r) => r.name);
}

/**
 * A test-mode job `id` of `account` being processed, with `chunks` pending chunks of one address
 * each, written straight into the store (for tests of what reads jobs and chunks, not of how
 * jobs are submitted).
 */
export async function insertProcessingJob(
  db: Kysely<Database>,
  job: { id: string; accountId: string; now: string; chunks: number },
): Promise<void> {
  await db
    .insertInto('jobs')
    .values({
      id: job.id,
      account_id: job.accountId,
      mode: 'test',
      status: 'processing',
      total: job.chunks,
      chunk_size: 1,
      chunk_count: job.chunks,
      quota_period_start: null,
      webhook_url: null,
      notify_email: 0,
      error: null,
      created_at: job.now,
      started_at: job.now,
      completed_at: null,
      failed_at: null,
      results_expire_at: new Date(Date.parse(job.now) + 31 * 24 * 3600_000).toISOString(),
      results_deleted_at: null,
    })
    .execute();
  for (let seq = 0; seq < job.chunks; seq++)
    await db
      .insertInto('job_chunks')
      .values({
        job_id: job.id,
        seq,
        start_index: seq,
        size: 1,
        emails: '["x@example.com"]',
        state: 'pending',
      })
      .execute();
}
