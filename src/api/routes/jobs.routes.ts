/**
 * The batch endpoints: POST /v1/verify/batch, GET /v1/jobs, GET /v1/jobs/:id,
 * GET /v1/jobs/:id/results, DELETE /v1/jobs/:id. See docs/jobs.md.
 */
import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../errors.js';
import { BATCH_BODY_LIMIT } from '../../services/batches/batch-intake.js';
import { readBatchBody } from '../batch-body.js';
import { createValidatorCompiler } from '../validation.js';
import { submitBatch } from '../../services/batches/batch.service.js';
import { cancelJob, getJobView, listJobs, openResults } from '../../services/batches/jobs.service.js';
import { systemResolver, type HostResolver } from '../../services/webhooks/ssrf.js';
import { requireAuth } from '../auth.js';
import { resultsBody } from '../results-body.js';
import type { ApiDeps } from '../deps.js';
import { AUTH_ERRORS, BODY_ERRORS, errorResponses } from '../schemas.js';
import {
  batchBodySchema,
  batchHeadersSchema,
  jobListQuerySchema,
  jobListSchema,
  jobParamsSchema,
  jobSchema,
  resultsJsonSchema,
  resultsQuerySchema,
  submissionSchema,
} from './jobs.schemas.js';

export function jobsRoutes(deps: ApiDeps, resolveHost: HostResolver = systemResolver): FastifyPluginAsync {
  return async (app) => {
    await app.register(batchSubmitRoute(deps, resolveHost));
    registerJobReadRoutes(app, deps);
  };
}

/**
 * POST /v1/verify/batch in a scope of its own: its JSON body is read as a stream
 * (api/batch-body.ts) instead of by Fastify's JSON.parse. The body schema stays in the route
 * for the OpenAPI document only: the streaming reader is what checks it.
 */
const requestValidator = createValidatorCompiler();
/** The body is checked while it is read (api/batch-body.ts); headers as every route's. */
const documentedBodyOnly: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? () => true : requestValidator(route);

function batchSubmitRoute(deps: ApiDeps, resolveHost: HostResolver): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', (request, payload, done) => {
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > BATCH_BODY_LIMIT) {
        done(new AppError('payload_too_large', `the request body is larger than ${BATCH_BODY_LIMIT} bytes`));
        return;
      }
      readBatchBody(payload, {
        chunkSize: deps.config.batch.chunkSize,
        // Only live jobs share results between repeated addresses (services/batches/chunk-verifier.ts).
        trackRepeats: request.auth?.kind === 'live',
      }).then(
        (body) => done(null, body),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    });
    app.post(
      '/v1/verify/batch',
      {
        bodyLimit: BATCH_BODY_LIMIT,
        validatorCompiler: documentedBodyOnly,
        config: { scope: 'batch' },
        schema: {
          operationId: 'submitBatch',
          summary: 'Submit a batch',
          description:
            'Asynchronous: answers 202 at once. Counts one request against the rate limit and, for live keys, one verification per address against the quota (the whole batch refused with 429 quota_exceeded when it does not fit and the plan has no overage).',
          tags: ['batch'],
          headers: batchHeadersSchema,
          body: batchBodySchema,
          response: {
            202: submissionSchema,
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'quota_exceeded', 'idempotency_key_reused']),
          },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const header = request.headers['idempotency-key'];
        const { submission, replayed } = await submitBatch(
          {
            db: deps.db,
            clock: deps.clock,
            config: deps.config,
            plans: deps.plans,
            resolveHost,
            // This process's next GET /v1/account/usage shows the batch (docs/api.md).
            usageCache: deps.usageCache,
          },
          {
            accountId: auth.accountId,
            mode: auth.kind,
            request: request.body,
            idempotencyKey: typeof header === 'string' ? header : null,
          },
        );
        if (replayed) void reply.header('idempotent-replayed', 'true');
        return reply.code(202).send({ ...submission, request_id: request.id });
      },
    );
  };
}

function registerJobReadRoutes(instance: FastifyInstance, deps: ApiDeps): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/jobs',
    {
      config: { scope: 'jobs:read' },
      schema: {
        operationId: 'listJobs',
        summary: 'List batch jobs',
        description: 'The account’s jobs, newest first, paginated with a cursor (beyond the contract).',
        tags: ['batch'],
        querystring: jobListQuerySchema,
        response: { 200: jobListSchema, ...errorResponses([...AUTH_ERRORS, 'invalid_request']) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const page = await listJobs(deps, auth.accountId, request.query);
      return { ...page, request_id: request.id };
    },
  );

  app.get(
    '/v1/jobs/:id',
    {
      config: { scope: 'jobs:read' },
      schema: {
        operationId: 'getJob',
        summary: 'Poll a batch job',
        tags: ['batch'],
        params: jobParamsSchema,
        response: { 200: jobSchema, ...errorResponses([...AUTH_ERRORS, 'not_found']) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const { id } = request.params;
      return { ...(await getJobView(deps, auth.accountId, id)), request_id: request.id };
    },
  );

  app.delete(
    '/v1/jobs/:id',
    {
      config: { scope: 'batch' },
      schema: {
        operationId: 'cancelJob',
        summary: 'Cancel a batch job',
        description:
          'Cancels a queued or processing job (beyond the contract): it becomes failed with error "cancelled". Unprocessed addresses are given back to the quota; processed ones stay counted.',
        tags: ['batch'],
        params: jobParamsSchema,
        response: {
          200: jobSchema,
          ...errorResponses([...AUTH_ERRORS, 'not_found', 'job_not_cancellable']),
        },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const { id } = request.params;
      return { ...(await cancelJob(deps, auth.accountId, id)), request_id: request.id };
    },
  );

  app.get(
    '/v1/jobs/:id/results',
    {
      config: { scope: 'jobs:read' },
      schema: {
        operationId: 'getJobResults',
        summary: 'Download batch results',
        description:
          'CSV (default; header email,status,score,reason, RFC 4180 quoting, empty reason when null) or ?format=json. One row per submitted address, in submission order, streamed.',
        tags: ['batch'],
        params: jobParamsSchema,
        querystring: resultsQuerySchema,
        response: {
          200: {
            description: 'The results.',
            content: {
              'text/csv': { schema: { type: 'string', description: 'email,status,score,reason' } },
              'application/json': { schema: resultsJsonSchema },
            },
          },
          ...errorResponses([
            ...AUTH_ERRORS,
            'invalid_request',
            'not_found',
            'job_not_ready',
            'results_expired',
          ]),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { id } = request.params;
      const { format } = request.query;
      const results = await openResults(deps, auth.accountId, id);
      const { job } = results;
      const body = resultsBody(results, format, request.id);
      if (format === 'csv') {
        void reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${job.id}.csv"`);
      } else {
        void reply.type('application/json; charset=utf-8');
      }
      return reply.send(Readable.from(body, { objectMode: false }));
    },
  );
}
