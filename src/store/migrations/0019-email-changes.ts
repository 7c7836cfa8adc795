/**
 * A person's change of sign-in address waiting for the new address to confirm it (issue 25): with
 * an SMTP relay, the new address gets a one-time link, and only its SHA-256 is stored here with
 * the address it will set. Without a relay the change is made at once and nothing is stored.
 * Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const emailChangesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('email_changes')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
      .addColumn('new_email', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('email_changes_person_idx').on('email_changes').column('person_id').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('email_changes').execute();
  },
};
