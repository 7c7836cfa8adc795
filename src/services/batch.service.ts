/**
 * Batch submission: validates the body, and in ONE transaction takes the idempotency key,
 * counts the quota and stores the job with its chunks. A refusal at any step rolls all of it
 * back: nothing stored, nothing counted. See docs/jobs.md.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { encodeEmails, encodeRepeats } from '../store/chunk-codec.js';
import { insertChunks } from '../store/chunk.store.js';
import type { Executor } from '../store/executor.js';
import {
  getIdempotencyKey,
  insertIdempotencyKey,
  replaceExpiredIdempotencyKey,
  type IdempotencyRecord,
} from '../store/idempotency.store.js';
import { getJob, insertJob, setJobQuotaPeriod } from '../store/job.store.js';
import type { JobMode, JobRow, JobStatus } from '../store/schema/jobs.schema.js';
import { randomBase62 } from './ids.js';
import type { PlanTable } from './plans.js';
import { consumeQuota } from './usage.service.js';
import {
  checkWebhookTarget,
  parseWebhookUrl,
  WebhookTargetError,
  type HostResolver,
} from './webhooks/ssrf.js';

export const MAX_BATCH_ADDRESSES = 500_000;
/** Longest accepted Idempotency-Key header. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface BatchRequest {
  emails: string[];
  webhookUrl: string | null;
  notifyEmail: boolean;
}

/**
 * Checks the parsed JSON body by hand: one loop over up to 500,000 entries is much cheaper
 * than a schema validator building an error object per item. Throws 422 `invalid_request`
 * naming the first problem.
 */
export function parseBatchRequest(body: unknown): BatchRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_request', 'body must be a JSON object');
  }
  const { emails, webhook_url: webhookUrl, notify_email: notifyEmail } = body as Record<string, unknown>;
  if (emails === undefined) throw new AppError('invalid_request', 'emails is required');
  if (!Array.isArray(emails)) throw new AppError('invalid_request', 'emails must be an array of strings');
  if (emails.length === 0) throw new AppError('invalid_request', 'emails must hold at least one address');
  if (emails.length > MAX_BATCH_ADDRESSES) {
    throw new AppError(
      'invalid_request',
      `emails holds ${emails.length} entries; at most ${MAX_BATCH_ADDRESSES} are accepted`,
    );
  }
  for (let i = 0; i < emails.length; i++) {
    if (typeof emails[i] !== 'string') {
      throw new AppError('invalid_request', `emails[${i}] must be a string, got ${jsonType(emails[i])}`);
    }
  }
  if (webhookUrl !== undefined && webhookUrl !== null && typeof webhookUrl !== 'string') {
    throw new AppError('invalid_request', 'webhook_url must be a string');
  }
  if (notifyEmail !== undefined && typeof notifyEmail !== 'boolean') {
    throw new AppError('invalid_request', 'notify_email must be a boolean');
  }
  return {
    emails: emails as string[],
    webhookUrl: typeof webhookUrl === 'string' ? webhookUrl : null,
    notifyEmail: notifyEmail ?? true,
  };
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * Hash of the request as the service understood it: defaults applied, so `{emails}` and
 * `{emails, notify_email: true}` are the same request. Each address is JSON-quoted, so no
 * two different lists hash alike.
 */
export function hashBatchRequest(req: BatchRequest): string {
  const h = createHash('sha256');
  h.update(`notify=${req.notifyEmail};webhook=${JSON.stringify(req.webhookUrl)};n=${req.emails.length};`);
  for (const e of req.emails) h.update(`${JSON.stringify(e)},`);
  return h.digest('hex');
}

export interface SubmitDeps {
  db: Executor;
  clock: Clock;
  config: Readonly<Config>;
  plans: PlanTable;
  resolveHost: HostResolver;
}

export interface SubmitInput {
  accountId: string;
  mode: JobMode;
  body: unknown;
  idempotencyKey: string | null;
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

/** Accepts a batch: see the module comment. Throws AppError invalid_request, quota_exceeded, idempotency_key_reused. */
export async function submitBatch(deps: SubmitDeps, input: SubmitInput): Promise<SubmitOutcome> {
  const { config } = deps;
  const key = checkIdempotencyKey(input.idempotencyKey);
  const req = parseBatchRequest(input.body);
  if (req.webhookUrl !== null) await checkSubmittedWebhook(deps, req.webhookUrl);

  const bodyHash = key === null ? '' : hashBatchRequest(req);
  const chunkSize = config.batch.chunkSize;
  const chunkTexts: string[] = [];
  for (let i = 0; i < req.emails.length; i += chunkSize) {
    chunkTexts.push(encodeEmails(req.emails.slice(i, i + chunkSize)));
  }
  const total = req.emails.length;
  // Test jobs are verified offline: probing a duplicate twice costs nothing there.
  const repeats = input.mode === 'live' ? encodeRepeats(req.emails, chunkSize) : null;

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
      chunk_count: chunkTexts.length,
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
      });
      await setJobQuotaPeriod(trx, jobId, consumed.periodStart);
    }
    await insertChunks(
      trx,
      chunkTexts.map((emails, seq) => ({
        job_id: jobId,
        seq,
        start_index: seq * chunkSize,
        size: Math.min(chunkSize, total - seq * chunkSize),
        emails,
        repeats: repeats?.[seq] ?? null,
        state: 'pending' as const,
      })),
    );
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
