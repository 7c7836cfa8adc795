/**
 * `mailverdict migrate`: brings the store's schema to the latest migration and exits, for
 * deployments that migrate before rolling out new processes (`serve` and `worker` also migrate
 * at start). Safe to run while other processes start: on PostgreSQL the migrations run under an
 * advisory lock.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../store/db.js';
import { migrateToLatest } from '../../store/migrate.js';
import { addCommonOptions, print, settingsFlags, type StoreFlags } from '../cli-support.js';

export function registerMigrateCommand(program: Command): void {
  addCommonOptions(
    program.command('migrate').description('run the store migrations (SQLite or PostgreSQL) and exit'),
  ).action(async (flags: StoreFlags) => {
    const config = loadConfig(settingsFlags({ ...flags }));
    const db = openDatabase(config);
    try {
      const outcome = await migrateToLatest(db);
      const store = config.databaseUrl === null ? 'sqlite' : 'postgres';
      print(flags.json, { store, ...outcome }, () =>
        outcome.applied.length === 0
          ? `${store} store already up to date`
          : `${store} store migrated: ${outcome.applied.join(', ')}`,
      );
    } finally {
      await db.destroy();
    }
  });
}
