/** The API's errors as one typed class (docs/api.md#errors). */
import { ERROR_CODES, type ErrorCode } from './generated/error-codes.js';

export { ERROR_CODES, type ErrorCode };

const KNOWN = new Set<string>(ERROR_CODES);

/** The error body every non-2xx answer of the API carries. */
export interface ErrorBody {
  error: string;
  message: string;
  request_id: string;
}

/**
 * An error answer of the API. `code` is one of the registry's codes; a code this client does not
 * know yet (a newer server) is still given, as a string, and `isKnownCode` says which it is.
 */
export class MailverdictError extends Error {
  override readonly name = 'MailverdictError';
  readonly code: ErrorCode | (string & {});
  /** HTTP status. */
  readonly status: number;
  /** `req_<id>` of the request (the body's, else `X-Request-Id`); quote it when reporting a problem. */
  readonly requestId: string | null;
  /** Seconds from `Retry-After` (429 `rate_limit_exceeded`, 503 `service_unavailable`); else null. */
  readonly retryAfter: number | null;

  constructor(init: {
    code: string;
    message: string;
    status: number;
    requestId: string | null;
    retryAfter: number | null;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }

  /** Whether `code` is one this client's registry lists (and so the `ErrorCode` union names). */
  isKnownCode(): this is MailverdictError & { code: ErrorCode } {
    return KNOWN.has(this.code);
  }

  /** The error a non-2xx response stands for; `body` is its parsed JSON (or text) when read already. */
  static fromResponse(response: Response, body: unknown): MailverdictError {
    const envelope = isErrorBody(body) ? body : null;
    return new MailverdictError({
      code: envelope?.error ?? `http_${response.status}`,
      message:
        envelope?.message ??
        `${response.status} ${response.statusText}`.trim() + ' (no mailverdict error body)',
      status: response.status,
      requestId: envelope?.request_id ?? response.headers.get('x-request-id'),
      retryAfter: parseRetryAfter(response.headers.get('retry-after')),
    });
  }
}

/** True when `err` is an API error with the code `code` (narrowing, for `catch` blocks). */
export function isMailverdictError<C extends ErrorCode>(
  err: unknown,
  code?: C,
): err is MailverdictError & { code: C } {
  return err instanceof MailverdictError && (code === undefined || err.code === code);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as ErrorBody).error === 'string' &&
    typeof (body as ErrorBody).message === 'string'
  );
}

/** Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
