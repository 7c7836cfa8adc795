import { type Kysely, type Migration } from 'kysely';

/**
 * Lists re-verified on a schedule (docs/dashboard.md, "Re-verification on a schedule"): the
 * schedule of a list (keyed by the list's first upload), its kept copy of the addresses, their
 * other cells and their last verdicts (so a run after the 72-hour retention still has its source
 * and a baseline), each run or skipped run, and the rows that changed in a run. Portable DDL.
 */
export const listSchedulesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('list_schedules')
      .addColumn('list_id', 'text', (c) => c.primaryKey().references('list_uploads.id').onDelete('cascade'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('every_days', 'integer', (c) => c.notNull())
      .addColumn('next_run_at', 'text', (c) => c.notNull())
      // A claimer's lease: set by the one UPDATE that claims a due run, cleared when it is settled.
      .addColumn('claimed_until', 'text')
      // The job whose verdicts the kept copy holds: what the next run is compared with.
      .addColumn('baseline_job', 'text')
      .addColumn('skipped_at', 'text')
      .addColumn('skipped_need', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('list_schedules_due_idx')
      .on('list_schedules')
      .columns(['next_run_at'])
      .execute();
    await db.schema
      .createIndex('list_schedules_account_idx')
      .on('list_schedules')
      .columns(['account_id'])
      .execute();

    await db.schema
      .createTable('list_schedule_rows')
      .addColumn('list_id', 'text', (c) =>
        c.notNull().references('list_schedules.list_id').onDelete('cascade'),
      )
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('emails', 'text', (c) => c.notNull())
      .addColumn('cells', 'text', (c) => c.notNull())
      .addColumn('statuses', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('list_schedule_rows_pk', ['list_id', 'seq'])
      .execute();

    await db.schema
      .createTable('list_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('list_id', 'text', (c) => c.notNull().references('list_uploads.id').onDelete('cascade'))
      .addColumn('job_id', 'text', (c) => c.unique().references('jobs.id').onDelete('cascade'))
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('total', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('compared_at', 'text')
      .addColumn('compared_with', 'text')
      .addColumn('became_undeliverable', 'integer')
      .addColumn('became_deliverable', 'integer')
      .execute();
    await db.schema
      .createIndex('list_runs_list_idx')
      .on('list_runs')
      .columns(['list_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('list_run_changes')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('part', 'integer', (c) => c.notNull())
      .addColumn('rows', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('list_run_changes_pk', ['job_id', 'part'])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of ['list_run_changes', 'list_runs', 'list_schedule_rows', 'list_schedules'])
      await db.schema.dropTable(table).execute();
  },
};
