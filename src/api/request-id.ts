/**
 * Request identifiers `req_<32 hex>`: generated for every request (a client's own X-Request-Id
 * is not trusted as ours) and echoed in the X-Request-Id header of every response.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

export function genReqId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** Registers the root hook that sets X-Request-Id first, before anything can fail. */
export function installRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
