/**
 * The chunks each worker process finished since it started (the operator console's "Service
 * health"): the process counts them in memory and writes the count with each heartbeat and at its
 * clean stop, so an idle worker that has worked shows apart from one idle since its start. Rows
 * of workers of an older version keep the default 0. Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const workerChunksDoneMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('workers')
      .addColumn('chunks_done', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('workers').dropColumn('chunks_done').execute();
  },
};
