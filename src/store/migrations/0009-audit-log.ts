/**
 * The security log (issue 16, "Sessions and the audit log"): one append-only table per store,
 * and the browser and client address of each dashboard session, shown on the sessions page.
 */
import type { Kysely, Migration } from 'kysely';

export const auditLogMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('actor_kind', 'text', (c) => c.notNull())
      // No foreign key: the entry outlives the member it names.
      .addColumn('actor_member_id', 'text')
      .addColumn('actor_email', 'text')
      .addColumn('client_ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('details', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('audit_log_account_idx')
      .on('audit_log')
      .columns(['account_id', 'created_at', 'id'])
      .execute();
    await db.schema.createIndex('audit_log_created_idx').on('audit_log').columns(['created_at']).execute();
    await db.schema.alterTable('dashboard_sessions').addColumn('user_agent', 'text').execute();
    await db.schema.alterTable('dashboard_sessions').addColumn('client_ip', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('dashboard_sessions').dropColumn('client_ip').execute();
    await db.schema.alterTable('dashboard_sessions').dropColumn('user_agent').execute();
    await db.schema.dropTable('audit_log').execute();
  },
};
