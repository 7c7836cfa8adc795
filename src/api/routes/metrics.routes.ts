/**
 * GET /metrics in the Prometheus text format. Not on the main listener when `--metrics-listen`
 * gives it one of its own (runtime.ts `startServer`); with `--metrics-token`, only for
 * `Authorization: Bearer <token>`, anyone else getting 404 as for an unknown route (issue 26).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { ApiMetrics } from '../metrics.js';

const BEARER = /^Bearer +(\S+) *$/i;

/** Whether the request carries the token, compared in constant time (through hashes of equal length). */
function carriesToken(request: FastifyRequest, token: string): boolean {
  const presented = BEARER.exec(request.headers.authorization ?? '')?.[1] ?? '';
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(presented), digest(token));
}

/** The /metrics route of a listener; `token` null: open (bind that listener to a private network). */
export function metricsRoute(metrics: ApiMetrics, token: string | null): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (token !== null && !carriesToken(request, token))
        throw new AppError('not_found', `no route GET ${request.url.split('?')[0]}`);
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    });
  };
}

/** The main listener's /metrics: none when `--metrics-listen` gives it a listener of its own. */
export function metricsRoutes(deps: {
  metrics: ApiMetrics;
  config: { metrics: { listen: unknown; token: string | null } };
}): FastifyPluginAsync {
  if (deps.config.metrics.listen !== null) return async () => {};
  return metricsRoute(deps.metrics, deps.config.metrics.token);
}
