/** GET /v1/account/usage: quota, billing period, rate limit and overage of the caller's account. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { getUsage } from '../../services/usage/usage.service.js';
import { requireAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AUTH_ERRORS, errorResponses, usageSchema } from '../schemas.js';

export function usageRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/account/usage',
      {
        config: { scope: 'usage:read' },
        schema: {
          operationId: 'getUsage',
          summary: 'Quota and plan usage',
          description: 'Usage of the current billing period. Test keys read the same account usage.',
          tags: ['account'],
          response: { 200: usageSchema, ...errorResponses(AUTH_ERRORS) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const usage = await getUsage(deps.db, {
          accountId: auth.accountId,
          now: deps.clock.now(),
          plans: deps.plans,
          usageCache: deps.usageCache,
        });
        return { ...usage, request_id: request.id };
      },
    );
  };
}
