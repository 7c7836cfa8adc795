/** Which answers the client retries, and how it reads Retry-After (docs/api.md#errors). */
import { describe, expect, it } from 'vitest';
import { isRetryable, MailverdictError, parseRetryAfter } from '../src/index.js';

const apiError = (code: string, status: number) =>
  new MailverdictError({ code, status, message: code, requestId: 'req_x', retryAfter: 1 });

describe('isRetryable', () => {
  it('retries what the server says a retry cures: rate limit and unavailability', () => {
    expect(isRetryable(apiError('rate_limit_exceeded', 429), false)).toBe(true);
    expect(isRetryable(apiError('service_unavailable', 503), false)).toBe(true);
  });

  it('never retries an empty quota or another client error', () => {
    for (const [code, status] of [
      ['quota_exceeded', 429],
      ['invalid_api_key', 401],
      ['invalid_request', 422],
      ['idempotency_key_reused', 422],
      ['internal_error', 500],
    ] as const)
      expect(isRetryable(apiError(code, status), true), code).toBe(false);
  });

  it('retries a network failure only for a call that is safe to repeat', () => {
    const networkError = new TypeError('fetch failed');
    expect(isRetryable(networkError, true)).toBe(true);
    expect(isRetryable(networkError, false)).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-26T10:00:00.000Z');
    expect(parseRetryAfter('2', now)).toBe(2);
    expect(parseRetryAfter('Thu, 26 Nov 2026 10:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Thu, 26 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
