import { sql, type Kysely, type Migration } from 'kysely';
import { storeBackend } from '../backend.js';
import { CHANGES_CHANNEL, WORK_CHANNEL } from '../dialect/postgres-notifications.js';

/**
 * PostgreSQL only: triggers that NOTIFY every process's listening connection
 * (store/dialect/postgres-notifications.ts) when a commit changes a key or an account (the key
 * cache drops its entries) or queues a job or hands a chunk back (idle workers look for it at
 * once). NOTIFY is delivered at commit and never for a rolled-back transaction; duplicates within
 * one transaction are folded into one. The payload is the schema, as the channels are shared by
 * every schema of the database. SQLite has nothing to install: its dialect watches changes in
 * process (store/dialect/sqlite-change-watch.ts, sqlite-work-watch.ts).
 */
export const notificationsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (storeBackend(db).name !== 'postgres') return;
    await sql`
      create function mailverdict_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify(tg_argv[0], tg_table_schema);
        return null;
      end $$`.execute(db);
    // Row triggers: a statement that changes no row (a conditional update that does not apply)
    // notifies nobody.
    for (const table of ['api_keys', 'accounts']) {
      await sql`
        create trigger ${sql.id(`${table}_notify_change`)}
        after insert or update or delete on ${sql.table(table)}
        for each row execute function mailverdict_notify(${sql.lit(CHANGES_CHANNEL)})`.execute(db);
    }
    await sql`
      create trigger jobs_notify_work after insert on jobs
      for each row execute function mailverdict_notify(${sql.lit(WORK_CHANNEL)})`.execute(db);
    // A chunk given back unfinished (a worker stopping) is for another worker to resume now.
    await sql`
      create trigger job_chunks_notify_work after update on job_chunks
      for each row
      when (old.lease_owner is not null and new.lease_owner is null and new.state = 'pending')
      execute function mailverdict_notify(${sql.lit(WORK_CHANNEL)})`.execute(db);
  },

  async down(db: Kysely<unknown>): Promise<void> {
    if (storeBackend(db).name !== 'postgres') return;
    await sql`drop function mailverdict_notify() cascade`.execute(db);
  },
};
