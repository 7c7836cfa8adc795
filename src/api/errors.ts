/**
 * The only place where an error code becomes an HTTP status, and where every error response
 * gets its envelope `{error, message, request_id}`. Fastify's own errors (body parsing, schema
 * validation, body size) are translated to the registry's codes here too.
 */
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type ErrorCode } from '../errors.js';
import { isTransientStoreError } from '../store/store-errors.js';

/** Retry-After of a 503 for a transient store failure. */
const STORE_RETRY_AFTER_SECONDS = 2;

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_api_key: 401,
  revoked_api_key: 401,
  insufficient_permissions: 403,
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
  request_timeout: 408,
  internal_error: 500,
  service_unavailable: 503,
  unauthenticated: 401,
  invalid_credentials: 401,
  csrf_rejected: 403,
  rate_limited: 429,
  member_exists: 409,
  owner_not_removable: 409,
};

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  request_id: string;
}

/** JSON schema of the envelope, for the OpenAPI document and fast serialisation. */
export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  required: ['error', 'message', 'request_id'],
  properties: {
    error: { type: 'string', description: 'Stable machine-readable code (docs/api.md lists them all).' },
    message: { type: 'string', description: 'Human-readable description.' },
    request_id: { type: 'string', description: 'Identifier of the request, req_<id>; also in X-Request-Id.' },
  },
} as const;

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
        `request bodies must be sent as Content-Type: application/json, got ${request.headers['content-type'] ?? 'none'}`,
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

/** Called with every AppError sent (metrics count quota refusals from here). */
export type ErrorObserver = (code: ErrorCode, request: FastifyRequest) => void;

/** Installs the error and not-found handlers that produce the envelope. */
export function installErrorHandlers(app: FastifyInstance, observe: ErrorObserver = () => {}): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = translate(err, request);
    if (appError.code === 'internal_error') request.log.error({ err }, 'unhandled error');
    else if (appError.code === 'service_unavailable' && !isAppError(err))
      request.log.warn({ err }, 'store unavailable');
    // An error sent before the body was read to its end (a streamed batch refused early): close
    // the connection instead of reading, for keep-alive's sake, what is left of a 150 MiB body.
    if (!request.raw.complete) void reply.header('connection', 'close');
    const retryAfter = appError.details.retryAfterSeconds;
    if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
    observe(appError.code, request);
    return sendError(request, reply, appError.code, appError.message);
  });
  app.setNotFoundHandler((request, reply) => {
    observe('not_found', request);
    return sendError(request, reply, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
  });
}

/** Longest piece of a refused URL quoted back in a message. */
const QUOTED_URL_LENGTH = 120;

function quoteUrl(url: string): string {
  return url.length <= QUOTED_URL_LENGTH ? url : `${url.slice(0, QUOTED_URL_LENGTH)}…`;
}

/**
 * Fastify's `frameworkErrors`: errors of its router, raised before any hook runs (a path with a
 * bad percent-encoding, a path parameter over its maximum length). Same envelope, request id
 * and log line as every other response.
 */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('x-request-id', request.id);
  const code: ErrorCode =
    err.code === 'FST_ERR_BAD_URL'
      ? 'invalid_url'
      : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'uri_too_long'
        : 'bad_request';
  const message =
    code === 'invalid_url'
      ? `the path ${quoteUrl(request.raw.url ?? '')} holds an invalid percent-encoding`
      : code === 'uri_too_long'
        ? 'a path segment of the URL is too long'
        : 'the request could not be routed';
  request.log.info(
    { method: request.method, status: HTTP_STATUS[code], error: code },
    'request refused by the router',
  );
  sendError(request, reply, code, message);
}

/** What Node's HTTP parser refuses, before Fastify sees a request. */
function clientErrorCode(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

const CLIENT_ERROR_MESSAGES: Partial<Record<ErrorCode, string>> = {
  headers_too_large: 'the request line and headers are larger than the server accepts (16 KiB)',
  request_timeout: 'the request was not received in time',
  bad_request: 'the request is not well-formed HTTP',
};

/**
 * Fastify's `clientErrorHandler`: answers what Node's HTTP parser refused (oversized headers or
 * URL, malformed HTTP, a timeout) on the raw socket, with the envelope and a request id, and logs
 * it; Fastify's default writes its own format and logs only at trace level.
 */
export function createClientErrorHandler(
  log: { info(obj: object, msg: string): void },
  genReqId: () => string,
): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const code = clientErrorCode(err);
    const status = HTTP_STATUS[code];
    const requestId = genReqId();
    const body = JSON.stringify({
      error: code,
      message: CLIENT_ERROR_MESSAGES[code] ?? code,
      request_id: requestId,
    });
    log.info(
      { request_id: requestId, status, error: code, parser: err.code },
      'request refused by the HTTP parser',
    );
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
