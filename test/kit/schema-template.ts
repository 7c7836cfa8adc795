/**
 * The run's migrated schema template on the test PostgreSQL server (test/kit/store-harness.ts,
 * `createTestSchema({ migrated: true })`). The global setup migrates one schema once per run and
 * dumps it with pg_dump (its tables, indexes, triggers, functions and the migration table's rows);
 * each test schema is then that dump with the template's name replaced, run as one batch of
 * statements. PostgreSQL has no "create schema like": pg_dump is the tool that writes a schema
 * out exactly as the migrations left it, so nothing here repeats what the migrations do.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SchemaTemplate {
  /** The statements that create `schema` as the template is. */
  forSchema(schema: string): string;
}

function templateName(run: string): string {
  return `mv_test_${run}_template`;
}

function templateFile(run: string): string {
  return join(tmpdir(), `mailverdict-schema-template-${run}.sql`);
}

/**
 * Writes the run's template: `migrate` brings the schema at `url` to the latest migration. Returns
 * why there is none when pg_dump cannot write it (the tests then migrate each schema).
 */
export async function writeSchemaTemplate(
  databaseUrl: string,
  run: string,
  migrate: (url: string) => Promise<void>,
  createSchema: (name: string) => Promise<void>,
): Promise<string | null> {
  // Written already this run (the other project's setup).
  if (existsSync(templateFile(run))) return null;
  const schema = templateName(run);
  await createSchema(schema);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  await migrate(url.toString());
  let dump: string;
  try {
    dump = execFileSync(
      'pg_dump',
      ['--dbname', databaseUrl, '--schema', schema, '--no-owner', '--no-privileges', '--inserts'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    return `pg_dump could not dump the template schema (${(error as Error).message.split('\n')[0]})`;
  }
  // psql's meta-commands (\restrict, \unrestrict since the August 2025 releases) are not SQL.
  const statements = dump
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n');
  if (!statements.includes(`CREATE SCHEMA ${schema};`))
    return 'pg_dump wrote no CREATE SCHEMA for the template';
  const file = templateFile(run);
  const part = `${file}.${randomBytes(4).toString('hex')}`;
  writeFileSync(part, statements);
  renameSync(part, file);
  return null;
}

export function removeSchemaTemplate(run: string): void {
  rmSync(templateFile(run), { force: true });
}

let loaded: SchemaTemplate | null | undefined;

/** The run's template, or null when the global setup wrote none. */
export function schemaTemplate(): SchemaTemplate | null {
  if (loaded !== undefined) return loaded;
  const run = process.env.MAILVERDICT_TEST_RUN_ID;
  const file = run === undefined ? null : templateFile(run);
  if (run === undefined || file === null || !existsSync(file)) return (loaded = null);
  const name = templateName(run);
  const text = readFileSync(file, 'utf8');
  // Every object the dump writes is qualified by the template's name, which nothing else holds.
  loaded = { forSchema: (schema) => text.replaceAll(name, schema) };
  return loaded;
}
