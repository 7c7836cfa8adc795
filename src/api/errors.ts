/**
 * The v1 API's error handlers: every error response gets the envelope `{error, message,
 * request_id}` (src/http/errors.ts holds the status table and the translation both HTTP edges
 * use), including what Fastify's router and Node's HTTP parser refuse.
 */
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError, type ErrorCode } from '../errors.js';
import { HTTP_STATUS, sendError, translate } from '../http/errors.js';

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
