/**
 * The dashboard's error handler: the registry's codes and statuses (http/errors.ts translates
 * Fastify's own errors the same way for both), in the dashboard's envelope
 * `{error: {code, message, details?}, request_id}` (src/dashboard/contract.ts `ErrorEnvelope`).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_STATUS, translate } from '../http/errors.js';
import { isAppError, type AppError } from '../errors.js';
import type { ErrorEnvelope } from './contract.js';

export function sendDashboardError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
): FastifyReply {
  const { retryAfterSeconds, ...details } = error.details;
  if (typeof retryAfterSeconds === 'number') void reply.header('retry-after', String(retryAfterSeconds));
  const body: ErrorEnvelope = {
    error: {
      code: error.code,
      message: error.message,
      ...(Object.keys(details).length === 0 ? {} : { details }),
    },
    request_id: request.id,
  };
  return reply.code(HTTP_STATUS[error.code]).type('application/json; charset=utf-8').send(body);
}

export function installDashboardErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const error = translate(err, request);
    if (error.code === 'internal_error') request.log.error({ err }, 'unhandled error');
    else if (error.code === 'service_unavailable' && !isAppError(err))
      request.log.warn({ err }, 'store unavailable');
    // Refused before a body was read to its end (an upload): do not read the rest of it.
    const hasBody =
      request.headers['transfer-encoding'] !== undefined ||
      Number(request.headers['content-length'] ?? 0) > 0;
    if (hasBody && !request.raw.complete) void reply.header('connection', 'close');
    return sendDashboardError(request, reply, error);
  });
}
