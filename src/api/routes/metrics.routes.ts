/** GET /metrics in the Prometheus text format; no auth (bind it to a private network). */
import type { FastifyPluginAsync } from 'fastify';
import type { ApiDeps } from '../deps.js';

export function metricsRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const text = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(text);
    });
  };
}
