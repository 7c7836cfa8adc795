/**
 * Scheduled lists in steps, so that no step holds SQLite's writer lock for long whatever the
 * list's size:
 * - a run's comparison goes one part of the kept copy per transaction
 *   (services/lists/list-runs.service.ts). `list_runs.compare_step` counts the steps committed and is
 *   each step's optimistic lock (of two processes only one commits a step); `comparing` is the
 *   progress so far (JSON: cursor, counts, change parts);
 * - setting a schedule copies the list a few parts per transaction
 *   (services/lists/list-schedule.service.ts). `list_schedules.copying_until` is set while the copy is
 *   made (the lease of the request making it); null once it is whole.
 */
import type { Kysely, Migration } from 'kysely';

export const scheduleStepsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('list_runs')
      .addColumn('compare_step', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('list_runs').addColumn('comparing', 'text').execute();
    await db.schema.alterTable('list_schedules').addColumn('copying_until', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('list_schedules').dropColumn('copying_until').execute();
    await db.schema.alterTable('list_runs').dropColumn('comparing').execute();
    await db.schema.alterTable('list_runs').dropColumn('compare_step').execute();
  },
};
