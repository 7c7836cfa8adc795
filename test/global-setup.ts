/**
 * Drops the PostgreSQL schemas this test run created, once every test has ended. Tests do not
 * drop their own: a DROP SCHEMA while another test's migrator lists tables (Kysely's
 * introspector reads the catalogue of every schema) fails that listing with "schema does not
 * exist".
 */
import pg from 'pg';

export async function teardown(): Promise<void> {
  const url = process.env.MAILVERDICT_TEST_DATABASE_URL;
  const run = process.env.MAILVERDICT_TEST_RUN_ID;
  if (!url || !run) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `select nspname as name from pg_namespace where nspname like $1`,
      [`mv_test_${run}_%`],
    );
    for (const { name } of rows) await client.query(`drop schema if exists "${name}" cascade`);
  } finally {
    await client.end();
  }
}
