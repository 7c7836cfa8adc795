/** GET /healthz (the process answers) and GET /readyz (the store answers); no auth, outside /v1. */
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { ApiDeps } from '../deps.js';

export function healthRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async (request) => ({
      status: 'ok',
      request_id: request.id,
    }));
    app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
      try {
        await sql`select 1`.execute(deps.db);
        return { status: 'ok', request_id: request.id };
      } catch (err) {
        request.log.warn({ err }, 'store not reachable');
        return reply.code(503).send({ status: 'unavailable', request_id: request.id });
      }
    });
  };
}
