/**
 * The account's allow and block filters from the dashboard (docs/dashboard.md, "Filters"): the same
 * service as GET/POST /v1/filters and DELETE /v1/filters/:id (docs/outcomes.md, "Filters"), so the
 * normalisation, the limits and the errors are the API's. Any member may change them, as any member
 * may create and revoke keys; each change is in the security log, and none is made while an
 * operator has the account suspended (its keys cannot change them either).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  createFilterBy,
  deleteFilterBy,
  listFilters,
  MAX_FILTERS,
  MAX_MX_FILTERS,
} from '../../services/outcomes/filters.service.js';
import { byMember } from '../audit-origin.js';
import { CreateFilterBody, FilterItem, FilterList, IdParams } from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

export function filtersRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();

    app.get('/filters', { schema: { response: { 200: FilterList } } }, async (request) => ({
      filters: await listFilters(db, requireSession(request).accountId),
      limit: MAX_FILTERS,
      mx_limit: MAX_MX_FILTERS,
    }));

    app.post(
      '/filters',
      { schema: { body: CreateFilterBody, response: { 201: FilterItem } } },
      async (request, reply) => {
        const session = requireSession(request);
        const filter = await createFilterBy(
          db,
          clock,
          { ...request.body, accountId: session.accountId },
          byMember(request, session),
        );
        return reply.code(201).send(filter);
      },
    );

    app.delete(
      '/filters/:id',
      { schema: { params: IdParams, response: { 200: FilterItem } } },
      async (request) => {
        const session = requireSession(request);
        return deleteFilterBy(db, clock, session.accountId, request.params.id, byMember(request, session));
      },
    );
  };
}
