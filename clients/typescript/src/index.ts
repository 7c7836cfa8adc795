/** @mailverdict/client: a typed client for the mailverdict HTTP API v1 (README.md). */
export { Mailverdict, type MailverdictOptions, type CallOptions, type SubmitOptions } from './client.js';
export {
  MailverdictError,
  isMailverdictError,
  parseRetryAfter,
  ERROR_CODES,
  type ErrorCode,
  type ErrorBody,
} from './errors.js';
export { withRetry, isRetryable, type RetryOptions, type RetryInfo } from './retry.js';
export { hasEnded, streamRows, type EndedJob, type WaitOptions } from './batch.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookHeaders,
} from './webhooks.js';
export type * from './types.js';
export type { paths, components, operations } from './generated/openapi.js';
