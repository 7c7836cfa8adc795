/** Retrying what the API says may be retried: 429 `rate_limit_exceeded` and 503, after `Retry-After`. */
import { MailverdictError } from './errors.js';

export interface RetryOptions {
  /** Attempts after the first (default 3); 0 turns retrying off. */
  retries?: number;
  /** The longest wait honoured (default 30 s): a longer `Retry-After` is given to the caller at once. */
  maxDelayMs?: number;
  /** Called before each wait. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  /** What the attempt failed with: an API error, or a network error of a call safe to repeat. */
  error: unknown;
}

export interface AttemptOptions {
  /** The call may be repeated after a network error (a GET, or a POST with an `Idempotency-Key`). */
  idempotent: boolean;
  signal?: AbortSignal | undefined;
}

/** Waits without a retry-after: 0.5 s, 1 s, 2 s… (network errors, a 503 without the header). */
const BACKOFF_START_MS = 500;

/**
 * Whether an error may be retried as it is. 429 `quota_exceeded` may not (no retry cures an empty
 * quota), nor any 4xx: the same request would get the same answer.
 */
export function isRetryable(err: unknown, idempotent: boolean): boolean {
  if (err instanceof MailverdictError)
    return err.code === 'rate_limit_exceeded' || err.code === 'service_unavailable' || err.status === 503;
  // fetch rejects with a TypeError when the connection fails; an abort is the caller's own.
  return idempotent && err instanceof TypeError;
}

/** Runs `attempt` and repeats it after a retryable failure, waiting as the server asks. */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  options: RetryOptions,
  call: AttemptOptions,
): Promise<T> {
  const retries = options.retries ?? 3;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= retries || !isRetryable(error, call.idempotent)) throw error;
      const retryAfter = error instanceof MailverdictError ? error.retryAfter : null;
      const delayMs = retryAfter !== null ? retryAfter * 1000 : BACKOFF_START_MS * 2 ** n;
      if (delayMs > maxDelayMs) throw error;
      options.onRetry?.({ attempt: n + 1, delayMs, error });
      await sleep(delayMs, call.signal);
    }
  }
}

/** setTimeout as a promise that an AbortSignal ends early (Node and browsers alike). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
