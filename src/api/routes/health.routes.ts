/**
 * GET /healthz (the process answers) and GET /readyz (the store and, when configured, Redis
 * answer); no auth, outside /v1.
 */
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { ApiDeps } from '../deps.js';

export function healthRoutes(deps: ApiDeps): FastifyPluginAsync {
  const checks: [string, () => Promise<unknown>][] = [
    ['store', () => sql`select 1`.execute(deps.db)],
    ...Object.entries(deps.readinessChecks),
  ];
  return async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async (request) => ({
      status: 'ok',
      request_id: request.id,
    }));
    app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
      const failed: string[] = [];
      await Promise.all(
        checks.map(async ([name, check]) => {
          try {
            await check();
          } catch (err) {
            request.log.warn({ err }, `${name} not reachable`);
            failed.push(name);
          }
        }),
      );
      if (failed.length === 0) return { status: 'ok', request_id: request.id };
      return reply.code(503).send({ status: 'unavailable', failed: failed.sort(), request_id: request.id });
    });
  };
}
