/**
 * Who made each invitation (issue 16): removing a member revokes the invitations they made, which
 * the foreign key does by itself. Null for the operator's (CLI) and the bootstrap's links.
 */
import type { Kysely, Migration } from 'kysely';

export const invitationIssuerMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('member_tokens')
      .addColumn('invited_by', 'text', (c) => c.references('members.id').onDelete('cascade'))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('member_tokens').dropColumn('invited_by').execute();
  },
};
