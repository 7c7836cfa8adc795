import { sql, type Kysely, type Migration } from 'kysely';
import { storeBackend } from '../backend.js';
import { CHANGES_CHANNEL } from '../dialect/postgres-notifications.js';

/**
 * PostgreSQL only: a commit that changes an account's filters or its delivery outcomes notifies
 * every process, as one that changes a key or an account does (0003-notifications.ts), so that
 * what each process keeps of them in memory (services/store-memo.ts) is dropped before the next
 * verification reads it. Statement triggers: an intake of 10,000 events notifies once. SQLite
 * watches its writes in process (store/dialect/sqlite-change-watch.ts).
 */
export const outcomesNotifyMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (storeBackend(db).name !== 'postgres') return;
    for (const table of ['account_filters', 'outcome_events'])
      await sql`
        create trigger ${sql.id(`${table}_notify_change`)}
        after insert or update or delete on ${sql.table(table)}
        for each statement execute function mailverdict_notify(${sql.lit(CHANGES_CHANNEL)})`.execute(db);
  },

  async down(db: Kysely<unknown>): Promise<void> {
    if (storeBackend(db).name !== 'postgres') return;
    for (const table of ['account_filters', 'outcome_events'])
      await sql`drop trigger ${sql.id(`${table}_notify_change`)} on ${sql.table(table)}`.execute(db);
  },
};
