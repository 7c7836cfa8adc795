/**
 * POST /hooks/outcomes/:id/:token: where the mail systems' event webhooks deliver
 * (docs/outcomes.md, "Mail systems"). Outside /v1 and its API keys: the URL's token, then the
 * provider's signature (Postmark's basic auth), say who is calling. The body is read as bytes,
 * whatever its Content-Type (SNS sends text/plain), because signatures are over the bytes.
 *
 * No per-account rate limit: a provider answered 429 retries on its own schedule (SNS gives up
 * after a few tries), so a busy account would lose events; each delivery is bounded by its size
 * and is one account's own events.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { receiveHook } from '../../services/outcomes/sources.service.js';
import { createSnsVerifier } from '../../services/outcomes/esp/sns.js';
import type { ApiDeps } from '../deps.js';

/** A SendGrid POST carries many events (its batches stay well under this); the others one. */
export const HOOK_BODY_LIMIT = 4 * 1024 * 1024;

const hookParams = Type.Object({ id: Type.String(), token: Type.String() });

export function outcomeHooksRoutes(deps: ApiDeps): FastifyPluginAsync {
  const sns = createSnsVerifier({ fetch: deps.snsFetch, clock: deps.clock });
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: HOOK_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    app.post(
      '/hooks/outcomes/:id/:token',
      { bodyLimit: HOOK_BODY_LIMIT, schema: { hide: true, params: hookParams } },
      async (request) => {
        const { id, token } = request.params;
        const headers: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(request.headers))
          headers[name] = Array.isArray(value) ? value[0] : value;
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const report = await receiveHook(
          {
            db: deps.db,
            clock: deps.clock,
            retentionMs: deps.config.outcomeRetentionMs,
            resultCache: deps.resultCache ?? null,
            sns,
            snsFetch: deps.snsFetch,
          },
          { sourceId: id, token, headers, body },
        );
        request.log.info(
          {
            source: id,
            taken: report.taken,
            duplicates: report.duplicates,
            ignored: report.ignored,
            refused: report.refused,
          },
          'outcome hook taken',
        );
        return { ...report, request_id: request.id };
      },
    );
  };
}
