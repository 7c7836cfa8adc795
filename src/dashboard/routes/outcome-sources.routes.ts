/**
 * The mail systems whose event webhooks report the account's outcomes (docs/outcomes.md, "Mail
 * systems"): list, connect (the URL shown once), delete. The same service as /v1/outcome-sources.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  createOutcomeSourceBy,
  deleteSourceBy,
  listSources,
  MAX_SOURCES,
} from '../../services/outcomes/sources.service.js';
import { byMember } from '../audit-origin.js';
import { CreatedOutcomeSource, CreateOutcomeSourceBody, IdParams, OutcomeSourceList } from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

export function outcomeSourcesRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/outcome-sources', { schema: { response: { 200: OutcomeSourceList } } }, async (request) => ({
      sources: await listSources(db, requireSession(request).accountId),
      limit: MAX_SOURCES,
    }));

    app.post(
      '/outcome-sources',
      { schema: { body: CreateOutcomeSourceBody, response: { 201: CreatedOutcomeSource } } },
      async (request, reply) => {
        const session = requireSession(request);
        const { url, basic_auth, ...source } = await createOutcomeSourceBy(
          db,
          clock,
          deps.config.publicBaseUrl,
          {
            accountId: session.accountId,
            provider: request.body.provider,
            label: request.body.label ?? null,
            verificationKey: request.body.verification_key ?? null,
          },
          byMember(request, session),
        );
        return reply.code(201).send({ source, url, basic_auth });
      },
    );

    app.delete('/outcome-sources/:id', { schema: { params: IdParams } }, async (request, reply) => {
      const session = requireSession(request);
      await deleteSourceBy(db, clock, session.accountId, request.params.id, byMember(request, session));
      return reply.code(204).send();
    });
  };
}
