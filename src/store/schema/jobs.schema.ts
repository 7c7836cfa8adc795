/**
 * Tables of batch jobs (the batch issue). Timestamps are ISO 8601 UTC strings, booleans are
 * integers 0/1 (see store/db.ts). A job's addresses and results live in `job_chunks`, one row per
 * `config.batch.chunkSize` addresses, so that a 500,000-address job is a few hundred rows.
 */
import type { ColumnType, Generated, Selectable } from 'kysely';

export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** `test` jobs use the fixed test-mode results and never touch the network or the quota. */
export type JobMode = 'live' | 'test';

export interface JobsTable {
  /** Public id, `job_<base62>`. */
  id: string;
  account_id: string;
  mode: JobMode;
  status: JobStatus;
  total: number;
  processed: Generated<number>;
  valid_count: Generated<number>;
  invalid_count: Generated<number>;
  chunk_size: number;
  chunk_count: number;
  chunks_done: Generated<number>;
  /** Billing period the job was counted in (live jobs), for refunds on cancel or failure. */
  quota_period_start: string | null;
  webhook_url: string | null;
  notify_email: number;
  /** Why a failed job failed (`cancelled` for a cancelled one). */
  error: string | null;
  created_at: ColumnType<string, string, never>;
  started_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
  results_expire_at: string;
  /** Set by the retention sweep when it deleted the chunks; the job row itself stays. */
  results_deleted_at: string | null;
}

export type ChunkState = 'pending' | 'done';

export interface JobChunksTable {
  job_id: string;
  /** 0-based position of the chunk in its job. */
  seq: number;
  /** Index in the submitted list of the chunk's first address. */
  start_index: number;
  size: number;
  /** JSON array of the submitted strings, in order. */
  emails: string;
  /**
   * Live jobs: JSON array of the positions (in this chunk) whose address occurs more than once
   * in the job, so a worker probes it once and copies the result; null when there are none.
   */
  repeats: string | null;
  /** JSON array of compact rows (see store/chunk-codec.ts); null until the chunk is done. */
  results: string | null;
  state: ChunkState;
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** How many times a worker claimed this chunk; past a limit the job fails. */
  attempts: Generated<number>;
  valid_count: Generated<number>;
  invalid_count: Generated<number>;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  /** Hex SHA-256 of the canonical request body. */
  body_hash: string;
  job_id: string;
  created_at: string;
  expires_at: string;
}

export type DeliveryChannel = 'webhook' | 'email';
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'skipped';

/** The durable outbox of job events: one row per webhook call or notification e-mail. */
export interface JobDeliveriesTable {
  /** `msg_<base62>`; also the Standard Webhooks `webhook-id`, stable across retries. */
  id: string;
  job_id: string;
  account_id: string;
  channel: DeliveryChannel;
  event_type: 'job.completed' | 'job.failed';
  /** The webhook URL; null for e-mail (the account's address is read at send time). */
  target: string | null;
  /** JSON body of the event, fixed when the event happened. */
  payload: string;
  state: DeliveryState;
  attempts: Generated<number>;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface JobDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  started_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * Migration 0002 adds `webhook_secret` to the API issue's accounts table; declaring it here
 * (the intersection in store/schema.ts merges it into `accounts`) keeps that file untouched.
 */
export interface AccountWebhookColumns {
  /** `whsec_<base64>`, created on first use. */
  webhook_secret: string | null;
}

export interface JobTables {
  jobs: JobsTable;
  job_chunks: JobChunksTable;
  idempotency_keys: IdempotencyKeysTable;
  job_deliveries: JobDeliveriesTable;
  job_delivery_attempts: JobDeliveryAttemptsTable;
  accounts: AccountWebhookColumns;
}

export type JobRow = Selectable<JobsTable>;
export type ChunkRow = Selectable<JobChunksTable>;
export type DeliveryRow = Selectable<JobDeliveriesTable>;
