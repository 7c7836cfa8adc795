import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { storeBackend } from './backend.js';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

const MIGRATION_NAMES = Object.keys(migrations).sort();
/** The first migration: a process that runs it is the one that created the store. */
const FIRST_MIGRATION = MIGRATION_NAMES[0];

export interface MigrationOutcome {
  /** True when this call created the schema (a brand-new store); false when it was there. */
  created: boolean;
  /** Names of the migrations this call ran. */
  applied: string[];
}

/**
 * Brings the schema to the latest migration; run at start-up by every process that opens the
 * store, or alone by `mailverdict migrate`. On PostgreSQL, Kysely's migrator holds an advisory
 * lock meanwhile, so processes starting together migrate once and the others find it done.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationOutcome> {
  const backend = storeBackend(db);
  // Up to date (every process's start but the first and those after an upgrade): nothing to run,
  // and two queries instead of the migrator's four (SQLite) or seven (PostgreSQL: its catalogue
  // reads, its lock table, a transaction holding an advisory lock). Anything else (a new store,
  // a migration to run, one this code does not know) goes to the migrator, which runs it or says
  // what is wrong.
  const run = await backend.migrationsRun(db);
  if (run !== null && sameNames(run, MIGRATION_NAMES)) return { created: false, applied: [] };
  const schema = await backend.migrationSchema(db);
  const migrator = new Migrator({
    db,
    provider,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    throw new Error(
      `database migration failed${name}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  return { created: applied.includes(FIRST_MIGRATION!), applied };
}

function sameNames(run: readonly string[], known: readonly string[]): boolean {
  if (run.length !== known.length) return false;
  const sorted = [...run].sort();
  return sorted.every((name, i) => name === known[i]);
}
