/**
 * Request identifiers `req_<32 hex>`: generated for every request (a client's own X-Request-Id
 * is not trusted as ours) and echoed in the X-Request-Id header of every response.
 */
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

export function genReqId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}
