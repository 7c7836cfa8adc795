/**
 * The account's security log (owner only) and the signed-in member's own sessions
 * (docs/dashboard.md, "Security log" and "Sessions").
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { auditCsv, listAuditForMember } from '../../services/accounts/audit.service.js';
import { endOwnSession, listOwnSessions } from '../../services/people/session-list.service.js';
import { AuditPage, AuditQuery, IdParams, SessionList } from '../contract.js';
import { originOf } from '../audit-origin.js';
import type { DashboardDeps } from '../deps.js';
import { requirePerson, requireSession } from '../security.js';

export function auditRoutes(deps: DashboardDeps) {
  const { db, clock } = deps;
  return async (instance: FastifyInstance): Promise<void> => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/audit',
      { schema: { querystring: AuditQuery, response: { 200: AuditPage } } },
      async (request) => listAuditForMember(db, requireSession(request), request.query),
    );

    app.get('/audit.csv', { schema: { querystring: AuditQuery } }, async (request, reply) => {
      const session = requireSession(request);
      const { type, member } = request.query;
      const csv = await auditCsv(db, session, { ...(type ? { type } : {}), ...(member ? { member } : {}) });
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="security-log-${session.accountId}.csv"`)
        .send(csv);
    });

    // A person's own, whatever account the session acts in, or none (an operator who belongs to
    // no account lists and ends theirs too: issue 26).
    app.get('/sessions', { schema: { response: { 200: SessionList } } }, async (request) => ({
      sessions: await listOwnSessions(db, clock, requirePerson(request)),
    }));

    app.delete('/sessions/:id', { schema: { params: IdParams } }, async (request, reply) => {
      await endOwnSession(db, clock, requirePerson(request), request.params.id, originOf(request));
      return reply.code(204).send();
    });
  };
}
