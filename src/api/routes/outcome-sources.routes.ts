/**
 * GET/POST /v1/outcome-sources and DELETE /v1/outcome-sources/:id: the mail systems whose event
 * webhooks report the account's outcomes (docs/outcomes.md, "Mail systems"). A test key lists
 * them and cannot make or delete one: a source stores real events.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { createOutcomeSource, deleteSource, listSources } from '../../services/outcomes/sources.service.js';
import { requireAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AUTH_ERRORS, BODY_ERRORS, errorResponses, idParamsSchema } from '../schemas.js';
import {
  createdSourceSchema,
  sourceBodySchema,
  sourceDeletedSchema,
  sourceListSchema,
} from './outcome-sources.schemas.js';

function liveAccount(request: FastifyRequest): string {
  const auth = requireAuth(request);
  if (auth.kind === 'test')
    throw new AppError(
      'insufficient_permissions',
      'a test key cannot connect or remove a mail system; use a live key',
    );
  return auth.accountId;
}

export function outcomeSourcesRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/outcome-sources',
      {
        config: { scope: 'outcomes:write' },
        schema: {
          summary: 'List outcome sources',
          operationId: 'listOutcomeSources',
          description:
            "The account's mail-system webhooks, oldest first, with their counts (never their URL).",
          tags: ['outcomes'],
          response: { 200: sourceListSchema, ...errorResponses(AUTH_ERRORS) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        return { sources: await listSources(deps.db, auth.accountId), request_id: request.id };
      },
    );
    app.post(
      '/v1/outcome-sources',
      {
        config: { scope: 'outcomes:write' },
        schema: {
          summary: 'Connect a mail system',
          operationId: 'createOutcomeSource',
          description:
            "Makes the webhook URL for one provider's event webhook (ses, sendgrid, mailgun, postmark). The answer holds the URL (and Postmark's basic-auth credentials) once: they are kept hashed. See docs/outcomes.md for each provider's set-up.",
          tags: ['outcomes'],
          body: sourceBodySchema,
          response: { 200: createdSourceSchema, ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS]) },
        },
      },
      async (request) => {
        const accountId = liveAccount(request);
        const { body } = request;
        const created = await createOutcomeSource(deps.db, deps.clock, deps.config.publicBaseUrl, {
          accountId,
          provider: body.provider,
          label: body.label ?? null,
          verificationKey: body.verification_key ?? null,
        });
        request.log.info({ source: created.id, provider: created.provider }, 'outcome source created');
        return { ...created, request_id: request.id };
      },
    );
    app.delete(
      '/v1/outcome-sources/:id',
      {
        config: { scope: 'outcomes:write' },
        schema: {
          summary: 'Delete an outcome source',
          operationId: 'deleteOutcomeSource',
          description: 'Its URL stops working at once; the events it brought stay (erase them by address).',
          tags: ['outcomes'],
          params: idParamsSchema,
          response: { 200: sourceDeletedSchema, ...errorResponses([...AUTH_ERRORS, 'not_found']) },
        },
      },
      async (request) => {
        const accountId = liveAccount(request);
        const { id } = request.params;
        await deleteSource(deps.db, accountId, id);
        return { id, deleted: true as const, request_id: request.id };
      },
    );
  };
}
