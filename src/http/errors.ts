/**
 * What both HTTP edges (api/ and dashboard/) share: the only table where an error code becomes an
 * HTTP status, the translation of Fastify's own errors (body parsing, schema validation, body
 * size) and of transient store failures to the registry's codes, and the v1 envelope
 * `{error, message, request_id}` that the server's own refusals (unknown route, shutdown) use.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type ErrorCode } from '../errors.js';
import { isTransientStoreError } from '../store/store-errors.js';

/** Retry-After of a 503 for a transient store failure. */
const STORE_RETRY_AFTER_SECONDS = 2;

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_api_key: 401,
  revoked_api_key: 401,
  insufficient_permissions: 403,
  account_suspended: 403,
  origin_not_allowed: 403,
  invalid_email_format: 422,
  invalid_request: 422,
  invalid_json: 400,
  unsupported_media_type: 415,
  not_found: 404,
  method_not_allowed: 405,
  job_not_ready: 409,
  results_expired: 410,
  job_not_cancellable: 409,
  quota_exceeded: 429,
  rate_limit_exceeded: 429,
  idempotency_key_reused: 422,
  key_limit_reached: 409,
  payload_too_large: 413,
  invalid_url: 400,
  uri_too_long: 414,
  headers_too_large: 431,
  bad_request: 400,
  invalid_client_address: 400,
  request_timeout: 408,
  internal_error: 500,
  service_unavailable: 503,
  not_a_bounce: 422,
  malformed_message: 422,
  unauthenticated: 401,
  invalid_credentials: 401,
  csrf_rejected: 403,
  member_exists: 409,
  owner_not_removable: 409,
  weak_password: 422,
  two_factor_required: 403,
  challenge_required: 428,
};

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  request_id: string;
}

/** Sends the envelope for `code` with its status. */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
): FastifyReply {
  const body: ErrorBody = { error: code, message, request_id: request.id };
  return reply.code(HTTP_STATUS[code]).type('application/json; charset=utf-8').send(body);
}

/** Where a schema failure points: `timeout_ms`, `emails/3`, or the missing property's name. */
function fieldOf(err: FastifyError): string {
  const first = err.validation?.[0];
  if (!first) return err.validationContext ?? 'body';
  const params = first.params as { missingProperty?: string };
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (first.keyword === 'required' && params.missingProperty)
    return path === '' ? params.missingProperty : `${path}.${params.missingProperty}`;
  return path === '' ? (err.validationContext ?? 'body') : path;
}

/** The registry's error for what a route or Fastify threw (the dashboard's handler uses it too). */
export function translate(err: FastifyError, request: FastifyRequest): AppError {
  if (isAppError(err)) return err;
  if (err.validation) {
    const field = fieldOf(err);
    const first = err.validation[0];
    // A too-long or empty e-mail is a malformed address, not a malformed request.
    if (field === 'email' && (first?.keyword === 'maxLength' || first?.keyword === 'minLength'))
      return new AppError('invalid_email_format', `email ${first.message ?? 'is malformed'}`);
    const what = first?.keyword === 'required' ? 'is required' : (first?.message ?? 'is invalid');
    return new AppError('invalid_request', `${field} ${what}`, { field });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(
        'unsupported_media_type',
        `request bodies must be sent as Content-Type: application/json${request.routeOptions.config.messageBody === true ? ' or message/rfc822' : ''}, got ${request.headers['content-type'] ?? 'none'}`,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'the request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json', 'the request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is too large');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'the Content-Length header does not match the body');
    default:
      break;
  }
  // fastify's JSON parser throws a SyntaxError with statusCode 400 for malformed JSON.
  if (err instanceof SyntaxError || (err.statusCode === 400 && err.name === 'SyntaxError'))
    return new AppError('invalid_json', 'the request body is not valid JSON');
  if (err.statusCode === 413) return new AppError('payload_too_large', 'the request body is too large');
  // The store failed in a way a retry can cure (busy, disk full, I/O error, connection lost):
  // the statement's transaction rolled back, nothing was stored or counted.
  if (isTransientStoreError(err))
    return new AppError(
      'service_unavailable',
      'the store is temporarily unavailable; nothing was changed; retry the request',
      {
        retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
      },
    );
  if (err.statusCode === 415) return new AppError('unsupported_media_type', 'unsupported Content-Type');
  return new AppError(
    'internal_error',
    'an unexpected error occurred; quote the request_id when reporting it',
  );
}
