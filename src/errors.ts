/**
 * The one registry of error codes. Services throw `AppError` with a code; only the API layer
 * maps a code to an HTTP status (src/api/errors.ts). Every code is documented in docs/api.md.
 */
export const ERROR_CODES = [
  'invalid_api_key',
  'revoked_api_key',
  'insufficient_permissions',
  'account_suspended',
  'origin_not_allowed',
  'invalid_email_format',
  'invalid_request',
  'invalid_json',
  'unsupported_media_type',
  'not_found',
  'method_not_allowed',
  'job_not_ready',
  'results_expired',
  'job_not_cancellable',
  'quota_exceeded',
  'rate_limit_exceeded',
  'idempotency_key_reused',
  'key_limit_reached',
  'payload_too_large',
  'invalid_url',
  'uri_too_long',
  'headers_too_large',
  'bad_request',
  'invalid_client_address',
  'request_timeout',
  'internal_error',
  'service_unavailable',
  // Bounce and complaint messages (docs/outcomes.md).
  'not_a_bounce',
  'malformed_message',
  // The dashboard (docs/dashboard.md).
  'unauthenticated',
  'invalid_credentials',
  'csrf_rejected',
  'member_exists',
  'owner_not_removable',
  'weak_password',
  'two_factor_required',
  'challenge_required',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra machine-readable facts for the edge (e.g. `retryAfterSeconds` for rate limits). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
