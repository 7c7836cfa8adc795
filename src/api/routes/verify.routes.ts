/** POST /v1/verify: one address, synchronously. */
import type { FastifyPluginAsync } from 'fastify';
import { verifyOne } from '../../services/verify.service.js';
import { requireAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import {
  AUTH_ERRORS,
  BODY_ERRORS,
  errorResponses,
  verificationResultSchema,
  verifyBodySchema,
  type VerifyBody,
} from '../schemas.js';

export function verifyRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (app) => {
    app.post(
      '/v1/verify',
      {
        config: { scope: 'verify' },
        schema: {
          summary: 'Verify one address',
          description:
            'Synchronous. A live key counts one verification against the quota (before the probe); a test key returns the fixed test results and is not counted.',
          tags: ['verification'],
          body: verifyBodySchema,
          response: {
            200: verificationResultSchema,
            ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS, 'invalid_email_format', 'quota_exceeded']),
          },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const body = request.body as VerifyBody;
        const result = await verifyOne(deps, {
          accountId: auth.accountId,
          kind: auth.kind,
          email: body.email,
          timeoutMs: body.timeout_ms,
        });
        deps.metrics.verdicts.inc({ status: result.status, kind: auth.kind });
        deps.metrics.engineLatency.observe({ kind: auth.kind }, result.latency_ms / 1000);
        return {
          ...result,
          latency_ms: Math.round(reply.elapsedTime),
          checks: body.include_checks ? result.checks : {},
          request_id: request.id,
        };
      },
    );
  };
}
