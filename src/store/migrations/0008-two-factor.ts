/**
 * Two-factor sign-in (issue 16; docs/dashboard.md, "Two-factor sign-in"): a member's TOTP secret
 * and the last time step accepted (no code is taken twice), the hashes of their recovery codes,
 * the short-lived challenges between a correct password and the second factor, and whether an
 * account requires two factors of every member.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export const twoFactorMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // Beside members, not in it: a member's row is read on every request, the secret only when a
    // code is checked; and the row goes with its member.
    await db.schema
      .createTable('member_two_factor')
      .addColumn('member_id', 'text', (c) => c.primaryKey().references('members.id').onDelete('cascade'))
      // Base32; see docs/security.md ("Two-factor secrets") for how it is kept.
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      // Null while enrolment waits for its first code.
      .addColumn('enabled_at', 'text')
      // The highest TOTP time step accepted: a code of that step or an earlier one is refused.
      .addColumn('last_step', 'integer')
      .execute();

    await db.schema
      .createTable('member_recovery_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema
      .createIndex('member_recovery_codes_member_idx')
      .on('member_recovery_codes')
      .columns(['member_id'])
      .execute();

    await db.schema
      .createTable('sign_in_challenges')
      // SHA-256 of the challenge the browser holds between the two steps.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('sign_in_challenges_expire_idx')
      .on('sign_in_challenges')
      .columns(['expires_at'])
      .execute();

    await db.schema
      .alterTable('accounts')
      .addColumn('require_two_factor', 'integer', (c) =>
        c
          .notNull()
          .defaultTo(0)
          .check(sql`require_two_factor in (0, 1)`),
      )
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').dropColumn('require_two_factor').execute();
    for (const table of ['sign_in_challenges', 'member_recovery_codes', 'member_two_factor'])
      await db.schema.dropTable(table).execute();
  },
};
