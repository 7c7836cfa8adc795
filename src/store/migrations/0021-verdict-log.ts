/**
 * The verdict log (issue 27, part 4; docs/outcomes.md, "How accurate are we?"): the latest verdict
 * each account was given for each address by a live verification (single or batch), so that the
 * delivery outcomes that come later can say how often it was right. One row per (account, address);
 * the address is `address_key` (services/outcomes/address-key.ts), never the address. `since` is
 * when the verdict (status and reason) was first given without a change in between, `verified_at`
 * when it was last given. Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const verdictLogMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('verdict_log')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('address_key', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('score', 'integer', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('since', 'text', (c) => c.notNull())
      .addColumn('verified_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('verdict_log_pk', ['account_id', 'address_key'])
      .execute();
    await db.schema
      .createIndex('verdict_log_verified_idx')
      .on('verdict_log')
      .columns(['account_id', 'verified_at'])
      .execute();
    await db.schema.createIndex('verdict_log_at_idx').on('verdict_log').columns(['verified_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('verdict_log').execute();
  },
};
