/**
 * Delivery outcomes (issue 27; docs/outcomes.md): what an account's own sends found out about an
 * address (delivered, bounced, complained...). The address itself is not stored: `address_key`
 * is a keyed hash of it (services/outcomes/address-key.ts), so the table names no mailbox; the
 * domain is kept in the clear for the per-domain figures. The unique index is the idempotency
 * guard (address, type, time, the sender's id of the event) and the history read's index.
 * Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const outcomesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('outcome_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('address_key', 'text', (c) => c.notNull())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('source_id', 'text', (c) => c.notNull())
      .addColumn('detail', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('outcome_events_identity_idx')
      .on('outcome_events')
      .columns(['account_id', 'address_key', 'type', 'at', 'source_id'])
      .unique()
      .execute();
    await db.schema
      .createIndex('outcome_events_domain_idx')
      .on('outcome_events')
      .columns(['account_id', 'domain', 'type'])
      .execute();
    await db.schema.createIndex('outcome_events_at_idx').on('outcome_events').columns(['at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('outcome_events').execute();
  },
};
