import type { Kysely, Migration } from 'kysely';

/**
 * Publishable keys (docs/widget.md): a key made for web pages, restricted to its allowed origins
 * and limited per visitor, per key and per day. Its settings live with the key in `api_keys`
 * (null: the server's default); the daily count lives beside it in `api_key_days`, because
 * `api_keys` is watched by the key cache and a count written per request would empty it.
 * Portable DDL (SQLite and PostgreSQL), with 0001's conventions.
 */
export const publishableKeysMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('api_keys')
      .addColumn('publishable', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // Space-separated origins (`https://shop.example`); null for a secret key.
    await db.schema.alterTable('api_keys').addColumn('allowed_origins', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('visitor_rate_limit', 'integer').execute();
    await db.schema.alterTable('api_keys').addColumn('key_rate_limit', 'integer').execute();
    await db.schema.alterTable('api_keys').addColumn('daily_cap', 'integer').execute();

    await db.schema
      .createTable('api_key_days')
      .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('api_key_days_pk', ['key_id', 'day'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('api_key_days').execute();
    for (const column of [
      'daily_cap',
      'key_rate_limit',
      'visitor_rate_limit',
      'allowed_origins',
      'publishable',
    ])
      await db.schema.alterTable('api_keys').dropColumn(column).execute();
  },
};
