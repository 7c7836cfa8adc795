/**
 * The dashboard's error handler: the registry's codes and statuses, in the one envelope of the
 * service, v1's `{error, message, request_id}` (http/errors.ts, which also translates Fastify's
 * own errors the same way for both edges). Details of an error are not sent; `retryAfterSeconds`
 * becomes the Retry-After header.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError, translate } from '../http/errors.js';
import { isAppError, type AppError } from '../errors.js';

export function sendDashboardError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
): FastifyReply {
  const { retryAfterSeconds } = error.details;
  if (typeof retryAfterSeconds === 'number') void reply.header('retry-after', String(retryAfterSeconds));
  return sendError(request, reply, error.code, error.message);
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
