/**
 * The worker processes on the store (issue 19, the operator console's "Service health"): each
 * `serve` with embedded workers and each `mailverdict worker` registers a row at start, beats it
 * on a timer and marks it stopped on a clean shutdown; the sweep deletes rows not seen for a day.
 * Runtime state, not product data: `mailverdict store copy` leaves it behind. Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const workersMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('workers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('last_heartbeat_at', 'text', (c) => c.notNull())
      .addColumn('stopped_at', 'text')
      .execute();
    await db.schema
      .createIndex('workers_heartbeat_idx')
      .on('workers')
      .columns(['last_heartbeat_at'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('workers').execute();
  },
};
