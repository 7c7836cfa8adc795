/**
 * Batch submission: validates the body, and in ONE transaction takes the idempotency key,
 * counts the quota and stores the job with its chunks. A refusal at any step rolls all of it
 * back: nothing stored, nothing counted. See docs/jobs.md.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { insertChunks } from '../../store/chunk.store.js';
import type { Executor } from '../../store/executor.js';
import {
  getIdempotencyKey,
  insertIdempotencyKey,
  replaceExpiredIdempotencyKey,
  type IdempotencyRecord,
} from '../../store/idempotency.store.js';
import { getJob, insertJob, setJobQuotaPeriod } from '../../store/job.store.js';
import type { JobMode, JobRow, JobStatus } from '../../store/schema/jobs.schema.js';
import type { BatchAddresses } from './batch-intake.js';
import { randomBase62 } from '../ids.js';
import type { PlanTable } from '../usage/plans.js';
import { consumeQuota } from '../usage/usage.service.js';
import {
  checkWebhookTarget,
  parseWebhookUrl,
  WebhookTargetError,
  type HostResolver,
} from '../webhooks/ssrf.js';
import type { UsageCache } from '../usage/usage-cache.js';

/** Longest accepted Idempotency-Key header. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * A batch submission as the service takes it: the one definition, which POST /v1/verify/batch's
 * streaming reader (api/batch-body.ts) produces from the JSON body it checks.
 */
export interface BatchRequest {
  addresses: BatchAddresses;
  webhookUrl: string | null;
  notifyEmail: boolean;
}

/**
 * Hash of the request as the service understood it: defaults applied, so `{emails}` and
 * `{emails, notify_email: true}` are the same request; the addresses enter through their digest
 * (JSON-quoted one by one, so no two different lists hash alike).
 */
export function hashBatchRequest(req: BatchRequest): string {
  return createHash('sha256')
    .update(
      `notify=${req.notifyEmail};webhook=${JSON.stringify(req.webhookUrl)};n=${req.addresses.total};emails=${req.addresses.digest}`,
    )
    .digest('hex');
}

export interface SubmitDeps {
  db: Executor;
  clock: Clock;
  config: Readonly<Config>;
  plans: PlanTable;
  resolveHost: HostResolver;
  /**
   * Emptied for the account when this process counts or refunds (services/usage/usage-cache.ts), so
   * that its next usage read shows the batch. Required (issue 25: the v1 route had left it out);
   * null only in a process that answers no usage reads (a worker).
   */
  usageCache: UsageCache | null;
}

export interface SubmitInput {
  accountId: string;
  mode: JobMode;
  request: BatchRequest;
  idempotencyKey: string | null;
  /**
   * Runs in the submission's transaction once the job and its chunks are stored (the dashboard's
   * upload ties the file's other columns to the job there, services/lists/uploads.service.ts).
   */
  onStored?: (trx: Executor, jobId: string) => Promise<void>;
}

/** The 202 body of POST /v1/verify/batch, without request_id. */
export interface SubmissionView {
  job_id: string;
  status: JobStatus;
  total: number;
  created_at: string;
  results_expire_at: string;
}

export interface SubmitOutcome {
  submission: SubmissionView;
  /** True when the Idempotency-Key matched an earlier submission and its job came back. */
  replayed: boolean;
}

/**
 * Accepts a batch: see the module comment. Throws AppError invalid_request, quota_exceeded,
 * idempotency_key_reused. Closes the request's spooled chunks either way.
 */
export async function submitBatch(deps: SubmitDeps, input: SubmitInput): Promise<SubmitOutcome> {
  try {
    return await storeBatch(deps, input);
  } finally {
    input.request.addresses.chunks.close();
  }
}

async function storeBatch(deps: SubmitDeps, input: SubmitInput): Promise<SubmitOutcome> {
  const { config } = deps;
  const key = checkIdempotencyKey(input.idempotencyKey);
  const req = input.request;
  if (req.webhookUrl !== null) await checkSubmittedWebhook(deps, req.webhookUrl);

  const bodyHash = key === null ? '' : hashBatchRequest(req);
  const chunkSize = config.batch.chunkSize;
  const { chunks, total } = req.addresses;
  // Test jobs are verified offline: probing a duplicate twice costs nothing there.
  const repeats = input.mode === 'live' ? req.addresses.repeats : null;
  if (input.mode === 'live' && repeats === null)
    throw new AppError('internal_error', 'a live batch was read without tracking repeated addresses');

  return deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const createdAt = now.toISOString();
    const jobId = `job_${randomBase62(20)}`;

    if (key !== null) {
      const record: IdempotencyRecord = {
        account_id: input.accountId,
        key,
        body_hash: bodyHash,
        job_id: jobId,
        created_at: createdAt,
        expires_at: new Date(now.getTime() + config.idempotencyTtlMs).toISOString(),
      };
      // The insert comes first: it takes the write lock, and the primary key decides the race.
      const taken =
        (await insertIdempotencyKey(trx, record)) || (await replaceExpiredIdempotencyKey(trx, record));
      if (!taken) {
        const existing = await getIdempotencyKey(trx, input.accountId, key);
        if (!existing) throw new AppError('internal_error', 'idempotency key vanished during submission');
        if (existing.body_hash !== bodyHash) {
          throw new AppError(
            'idempotency_key_reused',
            'this Idempotency-Key was used with a different request body in the last 24 hours',
          );
        }
        const job = await getJob(trx, existing.job_id);
        if (!job) throw new AppError('internal_error', 'the job of this Idempotency-Key is missing');
        return { submission: toSubmissionView(job), replayed: true };
      }
    }

    const job = {
      id: jobId,
      account_id: input.accountId,
      mode: input.mode,
      status: 'queued' as const,
      total,
      chunk_size: chunkSize,
      chunk_count: chunks.count,
      quota_period_start: null,
      webhook_url: req.webhookUrl,
      notify_email: req.notifyEmail ? 1 : 0,
      created_at: createdAt,
      results_expire_at: new Date(now.getTime() + config.resultRetentionMs).toISOString(),
    };
    // A write before any read: under WAL, a transaction that read first cannot upgrade to a
    // writer once another process (a separate worker) has committed, and fails with SQLITE_BUSY.
    await insertJob(trx, job);
    if (input.mode === 'live') {
      const consumed = await consumeQuota(trx, {
        accountId: input.accountId,
        count: total,
        now,
        plans: deps.plans,
        ...(deps.usageCache === null ? {} : { usageCache: deps.usageCache }),
        source: 'batch',
      });
      await setJobQuotaPeriod(trx, jobId, consumed.periodStart);
    }
    // Read back from the spool one chunk at a time, as the statements need them.
    await insertChunks(
      trx,
      (function* () {
        for (let seq = 0; seq < chunks.count; seq++) {
          yield {
            job_id: jobId,
            seq,
            start_index: seq * chunkSize,
            size: Math.min(chunkSize, total - seq * chunkSize),
            emails: chunks.read(seq),
            repeats: repeats?.[seq] ?? null,
            state: 'pending' as const,
          };
        }
      })(),
    );
    await input.onStored?.(trx, jobId);
    return {
      submission: {
        job_id: jobId,
        status: job.status,
        total,
        created_at: createdAt,
        results_expire_at: job.results_expire_at,
      },
      replayed: false,
    };
  });
}

function toSubmissionView(job: JobRow): SubmissionView {
  return {
    job_id: job.id,
    status: job.status,
    total: job.total,
    created_at: job.created_at,
    results_expire_at: job.results_expire_at,
  };
}

function checkIdempotencyKey(key: string | null): string | null {
  if (key === null) return null;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError(
      'invalid_request',
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`,
    );
  }
  return key;
}

async function checkSubmittedWebhook(deps: SubmitDeps, raw: string): Promise<void> {
  try {
    const url = parseWebhookUrl(raw, deps.config.allowInsecureWebhooks);
    await checkWebhookTarget(url, {
      allowInsecure: deps.config.allowInsecureWebhooks,
      resolve: deps.resolveHost,
      // A name that does not resolve yet is accepted; delivery checks it again.
      allowUnresolved: true,
    });
  } catch (err) {
    if (err instanceof WebhookTargetError) throw new AppError('invalid_request', err.message);
    throw err;
  }
}
