/**
 * What the security log records of a dashboard request (services/accounts/audit.service.ts): where it came
 * from, and the signed-in member who made it.
 */
import type { FastifyRequest } from 'fastify';
import type { AuditActor, AuditOrigin } from '../services/accounts/audit.service.js';
import type { DashboardSession } from '../services/people/sessions.service.js';

export function originOf(request: FastifyRequest): AuditOrigin {
  const ua = request.headers['user-agent'];
  return { clientIp: request.ip, userAgent: typeof ua === 'string' ? ua : null };
}

export function memberActor(session: Pick<DashboardSession, 'memberId' | 'email'>): AuditActor {
  return { kind: 'member', memberId: session.memberId, email: session.email };
}

/** The fields of an audit event a signed-in member's request gives. */
export function byMember(request: FastifyRequest, session: DashboardSession) {
  return { accountId: session.accountId, actor: memberActor(session), origin: originOf(request) };
}
