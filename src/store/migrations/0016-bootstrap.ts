/**
 * The first start's bootstrap (issue 25, "A first start that fails loses nothing"): one row, made
 * with the first account in the same transaction, that remembers which keys the bootstrap made
 * and whether they reached anyone (printed to a terminal or written to the keys file). A start
 * that finds it undelivered completes it: new keys in place of the unshown ones, a new owner link.
 * Stores made before this migration have no row and are left alone. Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const bootstrapMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('bootstrap')
      // Always 'first': the primary key lets one process only make the bootstrap account.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('live_key_id', 'text', (c) => c.notNull())
      .addColumn('test_key_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('delivered_at', 'text')
      .addColumn('delivered_to', 'text')
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('bootstrap').execute();
  },
};
