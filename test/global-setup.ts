/**
 * Once per test run, around every test file:
 *
 * - Before: with a test PostgreSQL server, the run's migrated schema template
 *   (test/kit/schema-template.ts), which test stores and API harnesses copy instead of running
 *   the migrations each. Both projects of the suite's own tests run this setup (either may run
 *   alone); the second finds the template written and leaves it.
 * - After: drops the PostgreSQL schemas this run created, the template among them. Tests do not
 *   drop their own: a DROP SCHEMA while another test's migrator lists tables (Kysely's
 *   introspector reads the catalogue of every schema) fails that listing with "schema does not
 *   exist".
 */
import pg from 'pg';
import { openDatabase } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { removeSchemaTemplate, writeSchemaTemplate } from './kit/schema-template.js';
import { TEST_SECRETS } from './kit/store-harness.js';

export async function setup(): Promise<void> {
  const url = process.env.MAILVERDICT_TEST_DATABASE_URL;
  const run = process.env.MAILVERDICT_TEST_RUN_ID;
  if (!url || !run) return;
  const why = await writeSchemaTemplate(
    url,
    run,
    async (schemaUrl) => {
      const db = openDatabase({ dataDir: '/nonexistent', databaseUrl: schemaUrl, secrets: TEST_SECRETS });
      try {
        await migrateToLatest(db);
      } finally {
        await db.destroy();
      }
    },
    (name) =>
      withClient(url, (client) => client.query(`create schema if not exists ${name}`).then(() => undefined)),
  );
  if (why !== null) console.log(`PostgreSQL test schemas are migrated one by one: ${why}`);
}

export async function teardown(): Promise<void> {
  const url = process.env.MAILVERDICT_TEST_DATABASE_URL;
  const run = process.env.MAILVERDICT_TEST_RUN_ID;
  if (!url || !run) return;
  removeSchemaTemplate(run);
  await withClient(url, async (client) => {
    const { rows } = await client.query<{ name: string }>(
      `select nspname as name from pg_namespace where nspname like $1`,
      [`mv_test_${run}_%`],
    );
    for (const { name } of rows) await client.query(`drop schema if exists "${name}" cascade`);
  });
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
