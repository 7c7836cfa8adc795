/**
 * The MCP server's door to a mailverdict server: its HTTP API v1 with one API key, so that the
 * key's scopes, the account's quota and its rate limit apply to an agent as to any client. Every
 * error answer becomes an `ApiCallError` with the API's code and message (docs/api.md#errors).
 *
 * Not @mailverdict/client (clients/typescript): that workspace package is built on its own and is
 * not a dependency of this one, whose `dist/` must run from `npm ci` and `npm run build` alone. The
 * rules are the same: 429 `rate_limit_exceeded` and 503 are retried after their Retry-After
 * (briefly; a longer wait comes back as the error), a batch carries an Idempotency-Key so a retried
 * submission never makes a second job, and nothing is sent again after a network error.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { JSONParser } from '@streamparser/json';

export interface ApiClientOptions {
  /** Base URL of the server, e.g. `https://verify.example.net`. */
  url: string;
  apiKey: string;
  /** Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** Retries of 429 `rate_limit_exceeded` and 503 (default 2). */
  retries?: number;
  /** The longest Retry-After waited for before a retry, in seconds (default 5). */
  maxRetryAfterSeconds?: number;
}

/** An error answer of the API (or no answer): `code` is the API's, or `connection_failed` / `http_<status>`. */
export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
  constructor(
    readonly code: string,
    message: string,
    /** HTTP status; null when no answer came. */
    readonly status: number | null,
    readonly requestId: string | null,
    /** Seconds from Retry-After, when the answer had one. */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

/** A page of a job's results: rows `offset` to `offset + rows.length - 1`. */
export interface ResultsPage {
  job_id: string;
  offset: number;
  rows: Record<string, unknown>[];
  /** The offset of the next page; null when this page holds the last row. */
  next_offset: number | null;
}

export type Json = Record<string, unknown>;

export interface ApiClient {
  readonly url: string;
  verify(body: Json): Promise<Json>;
  submitBatch(body: Json, idempotencyKey?: string): Promise<Json>;
  getJob(id: string): Promise<Json>;
  resultsPage(id: string, offset: number, limit: number): Promise<ResultsPage>;
  usage(): Promise<Json>;
  reportOutcomes(body: Json): Promise<Json>;
  /** One raw bounce or complaint message (RFC 3464 DSN, ARF), as POST /v1/outcomes takes it. */
  reportOutcomeMessage(message: string): Promise<Json>;
  eraseOutcomes(email: string): Promise<Json>;
  /** GET /v1/account/outcomes: the accuracy report over a period (ISO times; absent: the last 90 days). */
  outcomesReport(period: { from?: string; to?: string }): Promise<Json>;
  listFilters(): Promise<Json>;
  addFilter(body: Json): Promise<Json>;
  deleteFilter(id: string): Promise<Json>;
}

/** The URL as it may be shown (an error, a log line): without any `user:password@`. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href.replace(/\/+$/, '');
  } catch {
    return '(not a URL)';
  }
}

function retryAfterSeconds(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

async function errorOf(response: Response): Promise<ApiCallError> {
  const text = await response.text().catch(() => '');
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const requestId =
    typeof body.request_id === 'string' ? body.request_id : response.headers.get('x-request-id');
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  if (typeof body.error === 'string' && typeof body.message === 'string')
    return new ApiCallError(body.error, body.message, response.status, requestId, retryAfter);
  return new ApiCallError(
    `http_${response.status}`,
    `${response.status} ${response.statusText}`.trim() +
      ' (no mailverdict error body: is the URL a mailverdict server?)',
    response.status,
    requestId,
    retryAfter,
  );
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  // fetch refuses a URL with credentials, and an error must not show them: they are dropped.
  const base = displayUrl(options.url);
  const shown = base;
  const fetch = options.fetch ?? globalThis.fetch;
  const retries = options.retries ?? 2;
  const maxWait = options.maxRetryAfterSeconds ?? 5;

  /** One call, retried on 429 rate_limit_exceeded and 503 within the bounds; the response when 2xx. */
  async function send(
    method: string,
    path: string,
    init: { body?: Json; message?: string; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}`, ...init.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.message !== undefined) headers['content-type'] = 'message/rfc822';
    const body = init.body !== undefined ? JSON.stringify(init.body) : init.message;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body }),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
        const why =
          typeof cause?.code === 'string' ? cause.code : err instanceof Error ? err.message : String(err);
        throw new ApiCallError(
          'connection_failed',
          `could not reach the mailverdict server at ${shown}: ${why}`,
          null,
          null,
          null,
        );
      }
      if (response.ok) return response;
      const error = await errorOf(response);
      const retryable =
        (response.status === 429 && error.code === 'rate_limit_exceeded') || response.status === 503;
      const wait = error.retryAfter ?? 1;
      if (!retryable || attempt >= retries || wait > maxWait) throw error;
      await sleep(wait * 1000);
    }
  }

  const json = async (response: Response) => (await response.json()) as Json;
  const job = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;

  return {
    url: shown,
    verify: async (body) => json(await send('POST', '/v1/verify', { body })),
    submitBatch: async (body, idempotencyKey = randomUUID()) =>
      json(await send('POST', '/v1/verify/batch', { body, headers: { 'idempotency-key': idempotencyKey } })),
    getJob: async (id) => json(await send('GET', job(id))),
    usage: async () => json(await send('GET', '/v1/account/usage')),
    // Idempotent on (address, type, at, source_id): a retried report stores nothing twice.
    reportOutcomes: async (body) => json(await send('POST', '/v1/outcomes', { body })),
    reportOutcomeMessage: async (message) => json(await send('POST', '/v1/outcomes', { message })),
    outcomesReport: async (period) => {
      const query = new URLSearchParams(
        Object.entries(period).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      ).toString();
      return json(await send('GET', `/v1/account/outcomes${query === '' ? '' : `?${query}`}`));
    },
    eraseOutcomes: async (email) =>
      json(await send('DELETE', `/v1/outcomes?email=${encodeURIComponent(email)}`)),
    listFilters: async () => json(await send('GET', '/v1/filters')),
    addFilter: async (body) => json(await send('POST', '/v1/filters', { body })),
    deleteFilter: async (id) => json(await send('DELETE', `/v1/filters/${encodeURIComponent(id)}`)),
    async resultsPage(id, offset, limit) {
      const response = await send('GET', `${job(id)}/results?format=json`);
      // The API sends every row; read them as they arrive and stop one row past the page.
      const rows: Record<string, unknown>[] = [];
      let seen = 0;
      let more = false;
      const parser = new JSONParser({ paths: ['$.results.*'], keepStack: false });
      parser.onValue = (info: { value?: unknown }) => {
        const at = seen++;
        if (at < offset) return;
        if (rows.length < limit) rows.push(info.value as Record<string, unknown>);
        else more = true;
      };
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const requestId = response.headers.get('x-request-id');
      const cutShort = (why: string) =>
        new ApiCallError(
          'connection_failed',
          `the results ended before the end of the JSON document (${why})`,
          response.status,
          requestId,
          null,
        );
      try {
        while (!more) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (err) {
            throw cutShort(err instanceof Error ? err.message : String(err));
          }
          if (chunk.done) break;
          parser.write(chunk.value);
        }
        if (!more && !parser.isEnded) throw cutShort('the connection closed');
      } finally {
        reader.releaseLock();
        await response.body!.cancel().catch(() => undefined);
      }
      return { job_id: id, offset, rows, next_offset: more ? offset + rows.length : null };
    },
  };
}
