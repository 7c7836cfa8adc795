/**
 * 405 method_not_allowed for a known path called with another method (Fastify alone answers 404).
 * Every route registered before `methodNotAllowedRoutes` is remembered; that plugin then adds,
 * for each path, a route per missing method that answers 405 with an Allow header, before the
 * body is read.
 */
import type { FastifyInstance, FastifyPluginAsync, HTTPMethods } from 'fastify';
import { sendError } from '../http/errors.js';

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Starts remembering routes; returns the plugin to register after every other route. */
export function trackRoutesForMethodNotAllowed(app: FastifyInstance): FastifyPluginAsync {
  const methodsByUrl = new Map<string, Set<string>>();
  let closed = false;
  app.addHook('onRoute', (route) => {
    if (closed) return;
    const set = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) set.add(m);
    // Fastify answers HEAD for every GET route by itself.
    if (set.has('GET')) set.add('HEAD');
    methodsByUrl.set(route.url, set);
  });
  return async (instance) => {
    closed = true;
    for (const [url, allowed] of methodsByUrl) {
      const missing = METHODS.filter((m) => !allowed.has(m));
      if (missing.length === 0) continue;
      const allow = METHODS.filter((m) => allowed.has(m)).join(', ');
      instance.route({
        method: missing,
        url,
        schema: { hide: true },
        onRequest: async (request, reply) => {
          void reply.header('allow', allow);
          return sendError(
            request,
            reply,
            'method_not_allowed',
            `${request.method} is not allowed here; allowed: ${allow}`,
          );
        },
        handler: async () => undefined,
      });
    }
  };
}
