import { sql, type Kysely, type Migration } from 'kysely';

/** Batch jobs, their chunks, idempotency keys, the delivery outbox. Portable DDL (SQLite and PostgreSQL). */
export const jobsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('webhook_secret', 'text').execute();

    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('total', 'integer', (c) => c.notNull())
      .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('valid_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('invalid_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('chunk_size', 'integer', (c) => c.notNull())
      .addColumn('chunk_count', 'integer', (c) => c.notNull())
      .addColumn('chunks_done', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('quota_period_start', 'text')
      .addColumn('webhook_url', 'text')
      .addColumn('notify_email', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text')
      .addColumn('completed_at', 'text')
      .addColumn('failed_at', 'text')
      .addColumn('results_expire_at', 'text', (c) => c.notNull())
      .addColumn('results_deleted_at', 'text')
      .execute();
    await db.schema
      .createIndex('jobs_account_created_idx')
      .on('jobs')
      .columns(['account_id', 'created_at'])
      .execute();
    await db.schema.createIndex('jobs_status_idx').on('jobs').columns(['status', 'created_at']).execute();
    await db.schema.createIndex('jobs_expire_idx').on('jobs').columns(['results_expire_at']).execute();

    await db.schema
      .createTable('job_chunks')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('start_index', 'integer', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('emails', 'text', (c) => c.notNull())
      .addColumn('repeats', 'text')
      .addColumn('results', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('valid_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('invalid_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('job_chunks_pk', ['job_id', 'seq'])
      .execute();
    await db.schema
      .createIndex('job_chunks_state_idx')
      .on('job_chunks')
      .columns(['state', 'job_id'])
      .execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
      .execute();
    await db.schema
      .createIndex('idempotency_keys_expire_idx')
      .on('idempotency_keys')
      .columns(['expires_at'])
      .execute();

    await db.schema
      .createTable('job_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('webhook', 'email')`))
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('target', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema
      .createIndex('job_deliveries_due_idx')
      .on('job_deliveries')
      .columns(['state', 'next_attempt_at'])
      .execute();

    await db.schema
      .createTable('job_delivery_attempts')
      .addColumn('delivery_id', 'text', (c) =>
        c.notNull().references('job_deliveries.id').onDelete('cascade'),
      )
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('job_delivery_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('job_delivery_attempts').execute();
    await db.schema.dropTable('job_deliveries').execute();
    await db.schema.dropTable('idempotency_keys').execute();
    await db.schema.dropTable('job_chunks').execute();
    await db.schema.dropTable('jobs').execute();
    await db.schema.alterTable('accounts').dropColumn('webhook_secret').execute();
  },
};
