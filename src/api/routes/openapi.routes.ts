/** GET /v1/openapi.json: the OpenAPI 3.1 document built from the route schemas. No auth. */
import type { FastifyPluginAsync } from 'fastify';

export function openapiRoutes(): FastifyPluginAsync {
  return async (app) => {
    app.get('/v1/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
      // The root instance owns the document (@fastify/swagger registered on it).
      return reply.type('application/json; charset=utf-8').send(app.swagger());
    });
  };
}
