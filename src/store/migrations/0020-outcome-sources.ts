/**
 * The mail systems an account sends with (issue 27, part 1; docs/outcomes.md, "Mail systems"):
 * each outcome source is one provider's event webhook pointed at a URL of its own. The URL's
 * token is kept as its SHA-256 only; the provider's verification key (SendGrid's public key,
 * Mailgun's signing key) is sealed (store/secret-box.ts); Postmark's basic-auth password, which
 * is never read back, as its SHA-256. `outcome_hook_nonces` remembers the Mailgun tokens seen,
 * with the body they came with, until their timestamp is too old to be taken anyway. Portable DDL.
 */
import type { Kysely, Migration } from 'kysely';

export const outcomeSourcesMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('outcome_sources')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('label', 'text')
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('verify_key', 'text')
      .addColumn('password_hash', 'text')
      .addColumn('topic_arn', 'text')
      .addColumn('events_taken', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('events_ignored', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_event_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('outcome_sources_account_idx')
      .on('outcome_sources')
      .columns(['account_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('outcome_hook_nonces')
      .addColumn('source_id', 'text', (c) => c.notNull().references('outcome_sources.id').onDelete('cascade'))
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('outcome_hook_nonces_pk', ['source_id', 'nonce'])
      .execute();
    await db.schema
      .createIndex('outcome_hook_nonces_expiry_idx')
      .on('outcome_hook_nonces')
      .columns(['expires_at'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('outcome_hook_nonces').execute();
    await db.schema.dropTable('outcome_sources').execute();
  },
};
