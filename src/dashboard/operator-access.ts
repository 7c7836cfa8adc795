/**
 * Who reaches the operator console's routes (docs/operators.md): operators only; anyone else
 * gets 404 `not_found`, the answer of a route that does not exist, so the console is not even
 * seen to be there. Operators sign in on the same page as members; their session carries
 * `operator: true`.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { DashboardSession } from '../services/sessions.service.js';
import { requireSession } from './security.js';

export const isOperatorSession = (session: DashboardSession): boolean => session.operator === true;

/** The signed-in operator of an operator route; 404 for anyone else. */
export function requireOperator(
  request: FastifyRequest,
  isOperator: (session: DashboardSession) => boolean = isOperatorSession,
): DashboardSession {
  const session = requireSession(request);
  if (!isOperator(session))
    throw new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
  return session;
}
