import { sql, type Kysely, type Migration } from 'kysely';
import { storeBackend } from '../backend.js';
import { CHANGES_CHANNEL } from '../dialect/postgres-notifications.js';

/**
 * PostgreSQL only: a commit that changes an account's filters notifies every process, as one that
 * changes a key or an account does (0003-notifications.ts), so that the filters each process keeps
 * in memory (services/outcomes/filters.service.ts) are dropped before the next verification reads
 * them. SQLite watches its writes in process (store/dialect/sqlite-change-watch.ts).
 */
export const filtersNotifyMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (storeBackend(db).name !== 'postgres') return;
    await sql`
      create trigger account_filters_notify_change
      after insert or update or delete on account_filters
      for each row execute function mailverdict_notify(${sql.lit(CHANGES_CHANNEL)})`.execute(db);
  },

  async down(db: Kysely<unknown>): Promise<void> {
    if (storeBackend(db).name !== 'postgres') return;
    await sql`drop trigger account_filters_notify_change on account_filters`.execute(db);
  },
};
