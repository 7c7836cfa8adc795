/**
 * JSON schemas of the batch endpoints: request validation, response serialisation and the
 * OpenAPI document. The batch body's schema only documents it: the streaming reader
 * (api/batch-body.ts) checks the body as it arrives, with the same limits imported below.
 */
import { PROVIDERS, STATUSES } from '../../engine/types.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../services/batches/batch.service.js';
import { MAX_BATCH_ADDRESSES, MAX_BATCH_ENTRY_LENGTH } from '../../services/batches/batch-intake.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../batch-body.js';
import { JOB_STATUSES } from '../../services/batches/job-view.js';
import { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE } from '../../services/batches/jobs.service.js';

const requestId = {
  type: 'string',
  description: 'Identifier of this request, req_<id>; also in X-Request-Id.',
} as const;
const timestamp = { type: 'string', format: 'date-time' } as const;

export const batchBodySchema = {
  type: 'object',
  required: ['emails'],
  additionalProperties: false,
  description:
    'Read as a stream and checked while it arrives: an unknown field, a value of the wrong type or an over-long entry ends the request with 422 naming it, before the rest is read. At most 150 MiB (413 beyond).',
  properties: {
    emails: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_ADDRESSES,
      items: { type: 'string', maxLength: MAX_BATCH_ENTRY_LENGTH },
      description:
        'The addresses, in order, duplicates included. A string that is not a well-formed address is accepted and gets an undeliverable / invalid_email_format row.',
    },
    webhook_url: {
      type: ['string', 'null'],
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description:
        'https:// URL called (signed, Standard Webhooks) when the job completes or fails. See docs/webhooks.md.',
    },
    notify_email: {
      type: 'boolean',
      default: true,
      description: "E-mail the account's address when the job completes.",
    },
  },
} as const;

export const batchHeadersSchema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
      description:
        'Optional. Same key and same body within 24 hours: the same job comes back. Same key, different body: 422 idempotency_key_reused.',
    },
  },
} as const;

export const submissionSchema = {
  type: 'object',
  description: 'The job was accepted.',
  required: ['job_id', 'status', 'total', 'created_at', 'results_expire_at', 'request_id'],
  properties: {
    job_id: { type: 'string', description: 'job_<id>' },
    status: {
      type: 'string',
      enum: JOB_STATUSES,
      description: 'queued for a new job; an idempotent replay shows the job’s current status.',
    },
    total: {
      type: 'integer',
      description: 'Number of addresses accepted (duplicates and malformed strings included).',
    },
    created_at: timestamp,
    results_expire_at: {
      ...timestamp,
      description: 'created_at + the result retention (72 hours by default).',
    },
    request_id: requestId,
  },
} as const;

const jobProperties = {
  job_id: { type: 'string' },
  status: { type: 'string', enum: JOB_STATUSES },
  total: { type: 'integer' },
  processed: { type: 'integer', description: 'Present once the job has started; grows and never goes back.' },
  valid: { type: 'integer', description: 'When completed: rows with valid true.' },
  invalid: { type: 'integer', description: 'When completed: rows with status undeliverable.' },
  created_at: timestamp,
  completed_at: { ...timestamp, description: 'When completed.' },
  failed_at: { ...timestamp, description: 'When failed (additive to the contract).' },
  error: {
    type: 'string',
    description:
      'When failed: why ("cancelled" for a cancelled job; see docs/jobs.md). Additive to the contract.',
  },
  results_expire_at: timestamp,
  download_url: { type: 'string', description: 'When completed and while the results are retained.' },
} as const;

const jobRequired = ['job_id', 'status', 'total', 'created_at', 'results_expire_at'] as const;

export const jobSchema = {
  type: 'object',
  description: 'A batch job.',
  required: [...jobRequired, 'request_id'],
  properties: { ...jobProperties, request_id: requestId },
} as const;

export const jobListSchema = {
  type: 'object',
  description: 'The account’s jobs, newest first.',
  required: ['jobs', 'next_cursor', 'request_id'],
  properties: {
    jobs: { type: 'array', items: { type: 'object', required: jobRequired, properties: jobProperties } },
    next_cursor: {
      type: ['string', 'null'],
      description: 'Pass as ?cursor= for the next page; null on the last.',
    },
    request_id: requestId,
  },
} as const;

export const jobListQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
    cursor: { type: 'string', description: 'next_cursor of the previous page.' },
  },
} as const;

export const jobParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'job_<id>' } },
} as const;

export const resultsQuerySchema = {
  type: 'object',
  properties: { format: { type: 'string', enum: ['csv', 'json'], default: 'csv' } },
} as const;

export const resultsJsonSchema = {
  type: 'object',
  required: ['job_id', 'results', 'request_id'],
  properties: {
    job_id: { type: 'string' },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'email', 'status', 'score', 'reason', 'provider'],
        properties: {
          index: { type: 'integer', description: 'Zero-based position in the submitted list.' },
          email: { type: 'string', description: 'The address as submitted.' },
          status: { type: 'string', enum: STATUSES },
          score: { type: 'integer' },
          reason: { type: ['string', 'null'] },
          provider: {
            type: ['string', 'null'],
            enum: [...PROVIDERS, null],
            description:
              'checks.mx.provider of the result: the mail provider that runs the domain’s mail; null for any other.',
          },
        },
      },
    },
    request_id: requestId,
  },
} as const;
