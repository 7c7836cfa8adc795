/**
 * TypeBox schemas of the batch endpoints: request validation, response serialisation, the handlers'
 * types and the OpenAPI document. The batch body's schema only documents it: the streaming reader
 * (api/batch-body.ts) checks the body as it arrives, with the same limits imported below.
 */
import { Type, type TUnsafe } from '@sinclair/typebox';
import { PROVIDERS, STATUSES } from '../../engine/types.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, type BatchRequest } from '../../services/batches/batch.service.js';
import { MAX_BATCH_ADDRESSES, MAX_BATCH_ENTRY_LENGTH } from '../../services/batches/batch-intake.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../batch-body.js';
import { JOB_STATUSES } from '../../services/batches/job-view.js';
import { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE } from '../../services/batches/jobs.service.js';
import { DateTime, Defaulted, Nullable, NullableStringEnum, RequestId, StringEnum } from '../schemas.js';

/**
 * The wire form of the body, for the OpenAPI document. The handler gets what the streaming reader
 * made of it (its content-type parser runs instead of JSON.parse, and this schema validates
 * nothing), so the route's body is typed as that: the service's BatchRequest.
 */
export const batchBodySchema: TUnsafe<BatchRequest> = Type.Unsafe<BatchRequest>(
  Type.Object(
    {
      emails: Type.Array(Type.String({ maxLength: MAX_BATCH_ENTRY_LENGTH }), {
        minItems: 1,
        maxItems: MAX_BATCH_ADDRESSES,
        description:
          'The addresses, in order, duplicates included. A string that is not a well-formed address is accepted and gets an undeliverable / invalid_email_format row.',
      }),
      webhook_url: Type.Optional(
        Nullable(Type.String({ maxLength: MAX_WEBHOOK_URL_LENGTH }), {
          description:
            'https:// URL called (signed, Standard Webhooks) when the job completes or fails. See docs/webhooks.md.',
        }),
      ),
      notify_email: Defaulted(
        Type.Boolean({ default: true, description: "E-mail the account's address when the job completes." }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Read as a stream and checked while it arrives: an unknown field, a value of the wrong type or an over-long entry ends the request with 422 naming it, before the rest is read. At most 150 MiB (413 beyond).',
    },
  ),
);

export const batchHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
      description:
        'Optional. Same key and same body within 24 hours: the same job comes back. Same key, different body: 422 idempotency_key_reused.',
    }),
  ),
});

export const submissionSchema = Type.Object(
  {
    job_id: Type.String({ description: 'job_<id>' }),
    status: StringEnum(JOB_STATUSES, {
      description: 'queued for a new job; an idempotent replay shows the job’s current status.',
    }),
    total: Type.Integer({
      description: 'Number of addresses accepted (duplicates and malformed strings included).',
    }),
    created_at: DateTime(),
    results_expire_at: DateTime({
      description: 'created_at + the result retention (72 hours by default).',
    }),
    request_id: RequestId,
  },
  { description: 'The job was accepted.' },
);

const jobProperties = {
  job_id: Type.String(),
  status: StringEnum(JOB_STATUSES),
  total: Type.Integer(),
  processed: Type.Optional(
    Type.Integer({ description: 'Present once the job has started; grows and never goes back.' }),
  ),
  valid: Type.Optional(Type.Integer({ description: 'When completed: rows with valid true.' })),
  invalid: Type.Optional(Type.Integer({ description: 'When completed: rows with status undeliverable.' })),
  created_at: DateTime(),
  completed_at: Type.Optional(DateTime({ description: 'When completed.' })),
  failed_at: Type.Optional(DateTime({ description: 'When failed (additive to the contract).' })),
  error: Type.Optional(
    Type.String({
      description:
        'When failed: why ("cancelled" for a cancelled job; see docs/jobs.md). Additive to the contract.',
    }),
  ),
  results_expire_at: DateTime(),
  download_url: Type.Optional(
    Type.String({ description: 'When completed and while the results are retained.' }),
  ),
};

export const jobSchema = Type.Object(
  { ...jobProperties, request_id: RequestId },
  { description: 'A batch job.' },
);

export const jobListSchema = Type.Object(
  {
    jobs: Type.Array(Type.Object(jobProperties)),
    next_cursor: Nullable(Type.String(), {
      description: 'Pass as ?cursor= for the next page; null on the last.',
    }),
    request_id: RequestId,
  },
  { description: 'The account’s jobs, newest first.' },
);

export const jobListQuerySchema = Type.Object({
  limit: Defaulted(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
  cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page.' })),
});

export const jobParamsSchema = Type.Object({ id: Type.String({ description: 'job_<id>' }) });

export const resultsQuerySchema = Type.Object({
  format: Defaulted(StringEnum(['csv', 'json'], { default: 'csv' })),
});

export const resultsJsonSchema = Type.Object({
  job_id: Type.String(),
  results: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'Zero-based position in the submitted list.' }),
      email: Type.String({ description: 'The address as submitted.' }),
      status: StringEnum(STATUSES),
      score: Type.Integer(),
      reason: Nullable(Type.String()),
      provider: NullableStringEnum(PROVIDERS, {
        description:
          'checks.mx.provider of the result: the mail provider that runs the domain’s mail; null for any other.',
      }),
    }),
  ),
  request_id: RequestId,
});
