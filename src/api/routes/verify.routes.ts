/** POST /v1/verify: one address, synchronously. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { verifyOne } from '../../services/verify/verify.service.js';
import { requireAuth } from '../auth.js';
import { reducedResult, verifyResponseSchema } from '../publishable-schema.js';
import type { ApiDeps } from '../deps.js';
import { AUTH_ERRORS, BODY_ERRORS, errorResponses, verifyBodySchema } from '../schemas.js';

export function verifyRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/verify',
      {
        // Publishable keys too (docs/widget.md): from their origins, with the reduced answer.
        config: { scope: 'verify', publishable: true },
        schema: {
          operationId: 'verifyEmail',
          summary: 'Verify one address',
          description:
            'Synchronous. A live key counts one verification against the quota (before the probe), also when the answer comes from the result cache; a test key returns the fixed test results, is not counted and never uses the cache. `fresh: true` probes even when a cached answer exists. `include_transcript: true` adds `transcript`, the SMTP conversation (never from the cache).',
          tags: ['verification'],
          body: verifyBodySchema,
          response: {
            200: verifyResponseSchema,
            ...errorResponses([
              ...AUTH_ERRORS,
              ...BODY_ERRORS,
              'invalid_email_format',
              'quota_exceeded',
              'origin_not_allowed',
            ]),
          },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const { body } = request;
        const { result, cached, checkedAt, transcript } = await verifyOne(deps, {
          accountId: auth.accountId,
          kind: auth.kind,
          email: body.email,
          timeoutMs: body.timeout_ms,
          fresh: body.fresh,
          transcript: body.include_transcript,
        });
        deps.metrics.verdicts.inc({ status: result.status, kind: auth.kind });
        // A cached answer ran no engine: its latency is the original probe's, not this request's.
        if (!cached) deps.metrics.engineLatency.observe({ kind: auth.kind }, result.latency_ms / 1000);
        if (auth.publishable !== null) return reducedResult(result, request.id);
        return {
          ...result,
          latency_ms: Math.round(reply.elapsedTime),
          checks: body.include_checks ? result.checks : {},
          ...(transcript === undefined ? {} : { transcript }),
          cached,
          checked_at: checkedAt.toISOString(),
          request_id: request.id,
        };
      },
    );
  };
}
