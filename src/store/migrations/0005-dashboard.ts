import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The account dashboard (docs/dashboard.md): members and their sessions, one-time links, usage
 * per day, when each key was last used, the other columns of uploaded lists, the counts of a
 * finished job, and failed sign-ins. Portable DDL: runs on SQLite and PostgreSQL, with the
 * conventions of 0001 (ISO text timestamps, prefixed text ids, integers for counts).
 */
export const dashboardMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('members')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      // Lower-cased: one person, one address, one account.
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'member')`))
      .addColumn('password_hash', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('joined_at', 'text')
      .execute();
    await db.schema.createIndex('members_account_idx').on('members').columns(['account_id']).execute();

    await db.schema
      .createTable('dashboard_sessions')
      // SHA-256 of the cookie's secret: the store never holds what opens a session.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('dashboard_sessions_member_idx')
      .on('dashboard_sessions')
      .columns(['member_id'])
      .execute();
    await db.schema
      .createIndex('dashboard_sessions_expire_idx')
      .on('dashboard_sessions')
      .columns(['expires_at'])
      .execute();

    await db.schema
      .createTable('member_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('invitation', 'password_reset')`))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema
      .createIndex('member_tokens_member_idx')
      .on('member_tokens')
      .columns(['member_id', 'kind'])
      .execute();

    await db.schema
      .createTable('usage_days')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('single', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('batch', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('usage_days_pk', ['account_id', 'day'])
      .execute();

    // Beside api_keys, not in it: api_keys is watched by the key cache (a write there empties
    // every process's cache), and a key's last use is written once a minute.
    await db.schema
      .createTable('api_key_usage')
      .addColumn('key_id', 'text', (c) => c.primaryKey().references('api_keys.id').onDelete('cascade'))
      .addColumn('last_used_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('list_uploads')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('job_id', 'text', (c) => c.unique().references('jobs.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('header', 'text')
      .addColumn('email_column', 'integer', (c) => c.notNull())
      .addColumn('column_count', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('list_uploads_unlinked_idx')
      .on('list_uploads')
      .columns(['created_at'])
      .where(sql.ref('job_id'), 'is', null)
      .execute();

    // One row per chunk of the job: its rows' other cells. Keyed by the upload while the file
    // streams in (job_id null), then tied to the job's chunk in the submission's transaction, so
    // the retention sweep deleting a chunk deletes these cells with it.
    await db.schema
      .createTable('list_upload_rows')
      .addColumn('upload_id', 'text', (c) => c.notNull().references('list_uploads.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('job_id', 'text')
      .addColumn('cells', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('list_upload_rows_pk', ['upload_id', 'seq'])
      .addForeignKeyConstraint(
        'list_upload_rows_chunk_fk',
        ['job_id', 'seq'],
        'job_chunks',
        ['job_id', 'seq'],
        (fk) => fk.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('list_upload_rows_chunk_idx')
      .on('list_upload_rows')
      .columns(['job_id', 'seq'])
      .execute();

    await db.schema
      .createTable('job_result_counts')
      .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
      .addColumn('by_status', 'text', (c) => c.notNull())
      .addColumn('by_reason', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('sign_in_failures')
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('window_start', 'text', (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('sign_in_failures_pk', ['key', 'window_start'])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of [
      'sign_in_failures',
      'job_result_counts',
      'list_upload_rows',
      'list_uploads',
      'api_key_usage',
      'usage_days',
      'member_tokens',
      'dashboard_sessions',
      'members',
    ])
      await db.schema.dropTable(table).execute();
  },
};
