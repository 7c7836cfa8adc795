/**
 * The one door to the dashboard API (/dashboard/api). Every call goes through `request`, which
 * sends the session's CSRF token on anything but GET, turns the error envelope (v1's, the one of
 * the service) into an `ApiError`
 * that keeps the request id, and reports a lost session (401 `unauthenticated`) so the app can
 * show the sign-in page.
 */
import { CSRF_HEADER, DASHBOARD_API, type ErrorEnvelope } from './contract';

/** A failed call, in words: the server's message, its code and the request id to quote. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** "Could not revoke the key: the key was not found (request req_…)". */
export function describeError(action: string, error: unknown): string {
  if (error instanceof ApiError) {
    const id = error.requestId ? ` (request ${error.requestId})` : '';
    return `${action}: ${error.message}${id}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `${action}: ${message}`;
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface ApiClientOptions {
  fetch: Fetch;
  /** The CSRF token of the current session, or null before sign-in. */
  csrfToken: () => string | null;
  /** Called when the server says there is no session (401 `unauthenticated`). */
  onUnauthenticated: () => void;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Sent as JSON, or as-is when it is a Blob or a string with `contentType`. */
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
}

export interface ApiClient {
  request<T>(path: string, options?: RequestOptions): Promise<T>;
  /** The URL of an API path, for links the browser follows itself (downloads). */
  url(path: string, query?: RequestOptions['query']): string;
}

function withQuery(path: string, query: RequestOptions['query']): string {
  const url = `${DASHBOARD_API}${path}`;
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${url}?${text}` : url;
}

async function errorFrom(response: Response): Promise<ApiError> {
  const headerId = response.headers.get('x-request-id');
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // A proxy's HTML error page or an empty body: the status alone has to speak.
  }
  const envelope = (body ?? {}) as Partial<ErrorEnvelope>;
  const requestId = envelope.request_id ?? headerId;
  const code = typeof envelope.error === 'string' ? envelope.error : `http_${response.status}`;
  const message =
    typeof envelope.message === 'string'
      ? envelope.message
      : `the server answered ${response.status} ${response.statusText}`.trim();
  return new ApiError(message, response.status, code, requestId);
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  return {
    url: withQuery,
    async request<T>(path: string, { method = 'GET', body, contentType, query }: RequestOptions = {}) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (method !== 'GET') {
        const token = options.csrfToken();
        if (token) headers[CSRF_HEADER] = token;
      }
      let payload: BodyInit | undefined;
      if (body !== undefined) {
        if (contentType) {
          headers['content-type'] = contentType;
          payload = body as BodyInit;
        } else {
          headers['content-type'] = 'application/json';
          payload = JSON.stringify(body);
        }
      }
      let response: Response;
      try {
        response = await options.fetch(withQuery(path, query), {
          method,
          headers,
          body: payload,
          credentials: 'same-origin',
        });
      } catch (cause) {
        throw new ApiError(
          `the service could not be reached (${cause instanceof Error ? cause.message : String(cause)})`,
          0,
          'network_error',
          null,
        );
      }
      if (!response.ok) {
        const error = await errorFrom(response);
        if (error.status === 401 && error.code === 'unauthenticated') options.onUnauthenticated();
        throw error;
      }
      // 202 and 204 may come without a body.
      const text = await response.text();
      return (text === '' ? undefined : JSON.parse(text)) as T;
    },
  };
}
