/**
 * The account's allow and block filters from the dashboard (docs/dashboard.md, "Filters"): the same
 * service as GET/POST /v1/filters and DELETE /v1/filters/:id (docs/outcomes.md, "Filters"), so the
 * normalisation, the limits and the errors are the API's. Any member may change them, as any member
 * may create and revoke keys; each change is in the security log, and none is made while an
 * operator has the account suspended (its keys cannot change them either).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { refuseIfSuspended } from '../../services/accounts/accounts.service.js';
import { recordAudit, type AuditDetails } from '../../services/accounts/audit.service.js';
import {
  createFilter,
  deleteFilter,
  listFilters,
  MAX_FILTERS,
  MAX_MX_FILTERS,
  type FilterView,
} from '../../services/outcomes/filters.service.js';
import { byMember } from '../audit-origin.js';
import { CreateFilterBody, FilterItem, FilterList, IdParams } from '../contract.js';
import type { DashboardDeps } from '../deps.js';
import { requireSession } from '../security.js';

/**
 * What the security log keeps of a filter. An `email` filter's value is a person's address, which
 * the log would keep for its whole retention after the filter is gone: it keeps the domain only.
 */
function auditDetails(filter: FilterView): AuditDetails {
  const value =
    filter.match === 'email' ? `*@${filter.value.slice(filter.value.lastIndexOf('@') + 1)}` : filter.value;
  return { filter_id: filter.id, action: filter.action, match: filter.match, value };
}

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
        await refuseIfSuspended(db, session.accountId);
        const filter = await createFilter(db, clock, { ...request.body, accountId: session.accountId });
        await recordAudit(db, clock, {
          ...byMember(request, session),
          type: 'filter_created',
          details: auditDetails(filter),
        });
        return reply.code(201).send(filter);
      },
    );

    app.delete(
      '/filters/:id',
      { schema: { params: IdParams, response: { 200: FilterItem } } },
      async (request) => {
        const session = requireSession(request);
        await refuseIfSuspended(db, session.accountId);
        const filter = await deleteFilter(db, session.accountId, request.params.id);
        await recordAudit(db, clock, {
          ...byMember(request, session),
          type: 'filter_deleted',
          details: auditDetails(filter),
        });
        return filter;
      },
    );
  };
}
