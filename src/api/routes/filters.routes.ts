/** GET/POST /v1/filters and DELETE /v1/filters/:id: the account's allow and block filters (docs/outcomes.md). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { createFilter, deleteFilter, listFilters } from '../../services/outcomes/filters.service.js';
import { requireAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import {
  AUTH_ERRORS,
  BODY_ERRORS,
  errorResponses,
  filterBodySchema,
  filterDeletedSchema,
  filterListSchema,
  filterSchema,
  idParamsSchema,
} from '../schemas.js';

export function filtersRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/filters',
      {
        config: { scope: 'filters:write' },
        schema: {
          summary: 'List filters',
          operationId: 'listFilters',
          description: "The account's allow and block filters, oldest first.",
          tags: ['outcomes'],
          response: { 200: filterListSchema, ...errorResponses(AUTH_ERRORS) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        return { filters: await listFilters(deps.db, auth.accountId), request_id: request.id };
      },
    );
    app.post(
      '/v1/filters',
      {
        config: { scope: 'filters:write' },
        schema: {
          summary: 'Add a filter',
          operationId: 'addFilter',
          description:
            'A block answers undeliverable / blocked_by_filter, an allow deliverable / allowed_by_filter, both without a network check (an mx filter needs the MX look-up only). A filter for a (match, value) the account already filters takes the new action.',
          tags: ['outcomes'],
          body: filterBodySchema,
          response: { 200: filterSchema, ...errorResponses([...AUTH_ERRORS, ...BODY_ERRORS]) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const filter = await createFilter(deps.db, deps.clock, {
          ...request.body,
          accountId: auth.accountId,
        });
        return { ...filter, request_id: request.id };
      },
    );
    app.delete(
      '/v1/filters/:id',
      {
        config: { scope: 'filters:write' },
        schema: {
          summary: 'Delete a filter',
          operationId: 'deleteFilter',
          tags: ['outcomes'],
          params: idParamsSchema,
          response: { 200: filterDeletedSchema, ...errorResponses([...AUTH_ERRORS, 'not_found']) },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const { id } = request.params;
        await deleteFilter(deps.db, auth.accountId, id);
        return { id, deleted: true as const, request_id: request.id };
      },
    );
  };
}
