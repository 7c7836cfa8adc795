/**
 * Account suspension (issue 19, "An operator console"): when an operator suspended the account
 * and why (null: active; its keys are refused and its jobs wait while it is set), and the
 * account's own overage switch that the console sets beside its own quota and rate limit.
 */
import type { Kysely, Migration } from 'kysely';

export const accountSuspensionMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('suspended_at', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('suspended_reason', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('overage_enabled', 'integer').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').dropColumn('overage_enabled').execute();
    await db.schema.alterTable('accounts').dropColumn('suspended_reason').execute();
    await db.schema.alterTable('accounts').dropColumn('suspended_at').execute();
  },
};
