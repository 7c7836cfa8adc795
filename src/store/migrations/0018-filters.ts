/**
 * Each account's allow and block filters (issue 27; docs/outcomes.md, "Filters"): one row per
 * (match, value), so that a value is either allowed or blocked, never both. Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const filtersMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('account_filters')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('match', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('account_filters_value_idx')
      .on('account_filters')
      .columns(['account_id', 'match', 'value'])
      .unique()
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('account_filters').execute();
  },
};
