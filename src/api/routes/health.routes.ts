/**
 * GET /healthz (the process answers) and GET /readyz (the store and, when configured, Redis
 * answer, and the DNS resolver is trusted: engine/dns/resolver-trust.ts); no auth, outside /v1.
 */
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import type { ApiDeps } from '../deps.js';

export function healthRoutes(deps: ApiDeps): FastifyPluginAsync {
  const checks: [string, () => Promise<unknown>][] = [
    ['store', () => sql`select 1`.execute(deps.db)],
    ['dns', () => resolverTrusted(deps)],
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
      const dns = failed.includes('dns') ? dnsBody(deps) : {};
      return reply
        .code(503)
        .send({ status: 'unavailable', failed: failed.sort(), ...dns, request_id: request.id });
    });
  };
}

/**
 * Live verification is not ready while the resolver is not trusted: its negative answers are not
 * believed. Before the first check, the check runs now.
 */
async function resolverTrusted({ dnsTrust }: ApiDeps): Promise<void> {
  const status = dnsTrust.status().state === 'unchecked' ? await dnsTrust.check() : dnsTrust.status();
  if (status.state !== 'trusted' && status.state !== 'off')
    throw new Error(`DNS resolver ${status.state}: ${status.reason ?? 'not checked'}`);
}

function dnsBody({ dnsTrust }: ApiDeps): { dns: { state: string; reason: string | null } } {
  const { state, reason } = dnsTrust.status();
  return { dns: { state, reason } };
}
