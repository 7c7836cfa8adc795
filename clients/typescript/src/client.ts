/**
 * The client: openapi-fetch over the generated types (src/generated/openapi.ts), with every
 * error answer thrown as a MailverdictError and retries as the server asks (src/retry.ts).
 */
import createClient, { type Client } from 'openapi-fetch';
import { streamRows, waitFor, type EndedJob, type WaitOptions } from './batch.js';
import { MailverdictError } from './errors.js';
import type { paths } from './generated/openapi.js';
import { withRetry, type RetryOptions } from './retry.js';
import type {
  BatchAccepted,
  BatchRequest,
  Filter,
  FilterDeleted,
  FilterList,
  FilterRequest,
  Job,
  JobList,
  JobListQuery,
  JobSummary,
  OutcomeSourceCreated,
  OutcomeSourceDeleted,
  OutcomeSourceList,
  OutcomeSourceRequest,
  OutcomesAccuracy,
  OutcomesErased,
  OutcomesReport,
  OutcomesTaken,
  ResultRow,
  Usage,
  VerifyRequest,
  VerifyResult,
} from './types.js';

export interface MailverdictOptions {
  /** `svc_live_…` or `svc_test_…`. */
  apiKey: string;
  /** Where `mailverdict serve` answers, e.g. `https://verify.example.net`. */
  baseUrl: string;
  /** Retries of 429 `rate_limit_exceeded` and 503 (default: 3, waits up to 30 s); `false`: none. */
  retry?: RetryOptions | false;
  /** Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface SubmitOptions extends CallOptions {
  /**
   * Sent as `Idempotency-Key`; the same on every retry, so a retried submission never makes a
   * second job. Default: a new random UUID per call.
   */
  idempotencyKey?: string;
}

/** What openapi-fetch resolves with. */
interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export class Mailverdict {
  /** The typed openapi-fetch client, for what the methods below do not cover. */
  readonly raw: Client<paths>;
  readonly #retry: RetryOptions;

  constructor(options: MailverdictOptions) {
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { authorization: `Bearer ${options.apiKey}` },
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
    this.#retry = options.retry === false ? { retries: 0 } : (options.retry ?? {});
  }

  /** POST /v1/verify. */
  verify(body: VerifyRequest, options: CallOptions = {}): Promise<VerifyResult> {
    // Not repeated after a network error: the server may have counted it already.
    return this.#call(() => this.raw.POST('/v1/verify', { body, signal: options.signal }), false, options);
  }

  /** GET /v1/account/usage. */
  usage(options: CallOptions = {}): Promise<Usage> {
    return this.#call(() => this.raw.GET('/v1/account/usage', { signal: options.signal }), true, options);
  }

  /** POST /v1/verify/batch, with an `Idempotency-Key` (see SubmitOptions). */
  submitBatch(body: BatchRequest, options: SubmitOptions = {}): Promise<BatchAccepted> {
    const key = options.idempotencyKey ?? globalThis.crypto.randomUUID();
    return this.#call(
      () =>
        this.raw.POST('/v1/verify/batch', {
          body,
          params: { header: { 'idempotency-key': key } },
          signal: options.signal,
        }),
      true,
      options,
    );
  }

  /** GET /v1/jobs/:id. */
  getJob(id: string, options: CallOptions = {}): Promise<Job> {
    return this.#call(
      () => this.raw.GET('/v1/jobs/{id}', { params: { path: { id } }, signal: options.signal }),
      true,
      options,
    );
  }

  /** GET /v1/jobs: one page, newest first; pass `next_cursor` back as `cursor` for the next. */
  listJobs(query: JobListQuery = {}, options: CallOptions = {}): Promise<JobList> {
    return this.#call(
      () => this.raw.GET('/v1/jobs', { params: { query }, signal: options.signal }),
      true,
      options,
    );
  }

  /** Every job of the account, newest first, page after page. */
  async *allJobs(options: CallOptions & { pageSize?: number } = {}): AsyncGenerator<JobSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.listJobs(
        { limit: options.pageSize ?? 100, ...(cursor ? { cursor } : {}) },
        options,
      );
      yield* page.jobs;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** DELETE /v1/jobs/:id: cancels a queued or processing job; resolves with it, now failed. */
  cancelJob(id: string, options: CallOptions = {}): Promise<Job> {
    return this.#call(
      () => this.raw.DELETE('/v1/jobs/{id}', { params: { path: { id } }, signal: options.signal }),
      true,
      options,
    );
  }

  /** Polls the job with a growing interval until it has completed or failed. */
  waitForJob(id: string, options: WaitOptions = {}): Promise<EndedJob> {
    return waitFor(() => this.getJob(id, options.signal ? { signal: options.signal } : {}), options);
  }

  /**
   * The job's rows in submission order, read as they arrive from `GET /v1/jobs/:id/results?format=json`.
   * Throws MailverdictError `job_not_ready` (not completed), `results_expired`, `not_found`.
   */
  async *results(id: string, options: CallOptions = {}): AsyncGenerator<ResultRow> {
    const body = await this.#call(
      () =>
        this.raw.GET('/v1/jobs/{id}/results', {
          params: { path: { id }, query: { format: 'json' } },
          parseAs: 'stream',
          signal: options.signal,
        }),
      true,
      options,
    );
    if (body === null) throw new Error('the results answer had no body');
    yield* streamRows(body);
  }

  /** Submits, waits for the job to end, and resolves with it (`completed` or `failed`). */
  async runBatch(body: BatchRequest, options: SubmitOptions & WaitOptions = {}): Promise<EndedJob> {
    const accepted = await this.submitBatch(body, options);
    return this.waitForJob(accepted.job_id, options);
  }

  /**
   * POST /v1/outcomes: up to 10,000 delivery outcomes of the account's sends (docs/outcomes.md).
   * Resolves with how many were taken and every refused event's index and reason.
   */
  reportOutcomes(body: OutcomesReport, options: CallOptions = {}): Promise<OutcomesTaken> {
    // Not repeated after a network error: events without `at` would be stored again at a new time.
    return this.#call(() => this.raw.POST('/v1/outcomes', { body, signal: options.signal }), false, options);
  }

  /**
   * POST /v1/outcomes with one raw bounce or complaint message (Content-Type: message/rfc822, at
   * most 1 MiB; docs/outcomes.md, "Bounce and complaint messages"). Resolves with what it was
   * (`kind`), the events it became and the recipients ignored; throws MailverdictError
   * `not_a_bounce` for a message that is neither a bounce nor a complaint report.
   */
  reportOutcomeMessage(message: string | Uint8Array, options: CallOptions = {}): Promise<OutcomesTaken> {
    // Repeated after a network error: a message's events carry its own times and ids (duplicates).
    return this.#call(
      () =>
        this.raw.POST('/v1/outcomes', {
          body: message as string,
          bodySerializer: (body) => body,
          headers: { 'content-type': 'message/rfc822' },
          signal: options.signal,
        }),
      true,
      options,
    );
  }

  /** DELETE /v1/outcomes?email=: erases every outcome the account holds for the address. */
  eraseOutcomes(email: string, options: CallOptions = {}): Promise<OutcomesErased> {
    // Not repeated after a network error: a second erasure would answer 0 for a done one.
    return this.#call(
      () => this.raw.DELETE('/v1/outcomes', { params: { query: { email } }, signal: options.signal }),
      false,
      options,
    );
  }

  /**
   * GET /v1/account/outcomes: for the addresses verified in the period (`from` and `to`, ISO dates
   * or times, both included; default the last 90 days) and sent to later, what became of them per
   * status, reason, provider and score band, and the reliability diagram (docs/outcomes.md).
   */
  outcomesReport(
    period: { from?: string; to?: string } = {},
    options: CallOptions = {},
  ): Promise<OutcomesAccuracy> {
    return this.#call(
      () => this.raw.GET('/v1/account/outcomes', { params: { query: period }, signal: options.signal }),
      true,
      options,
    );
  }

  /** GET /v1/filters: the account's allow and block filters, oldest first. */
  listFilters(options: CallOptions = {}): Promise<FilterList> {
    return this.#call(() => this.raw.GET('/v1/filters', { signal: options.signal }), true, options);
  }

  /** POST /v1/filters: adds a filter, or changes the action of the (match, value) filtered already. */
  addFilter(body: FilterRequest, options: CallOptions = {}): Promise<Filter> {
    return this.#call(() => this.raw.POST('/v1/filters', { body, signal: options.signal }), true, options);
  }

  /** DELETE /v1/filters/:id. Throws MailverdictError `not_found` for an id the account does not hold. */
  deleteFilter(id: string, options: CallOptions = {}): Promise<FilterDeleted> {
    // Not repeated after a network error: a done deletion would answer not_found.
    return this.#call(
      () => this.raw.DELETE('/v1/filters/{id}', { params: { path: { id } }, signal: options.signal }),
      false,
      options,
    );
  }

  /** GET /v1/outcome-sources: the account's mail-system webhooks, oldest first, never their URL. */
  listOutcomeSources(options: CallOptions = {}): Promise<OutcomeSourceList> {
    return this.#call(() => this.raw.GET('/v1/outcome-sources', { signal: options.signal }), true, options);
  }

  /**
   * POST /v1/outcome-sources: connects a mail system's event webhook (docs/outcomes.md, "Mail
   * systems"). The answer's `url` (and Postmark's `basic_auth`) is shown this once. Needs a live key.
   */
  createOutcomeSource(body: OutcomeSourceRequest, options: CallOptions = {}): Promise<OutcomeSourceCreated> {
    // Not repeated after a network error: a second source would be made, its URL never seen.
    return this.#call(
      () => this.raw.POST('/v1/outcome-sources', { body, signal: options.signal }),
      false,
      options,
    );
  }

  /** DELETE /v1/outcome-sources/:id: its URL is refused from the next delivery on. */
  deleteOutcomeSource(id: string, options: CallOptions = {}): Promise<OutcomeSourceDeleted> {
    // Not repeated after a network error: a done deletion would answer not_found.
    return this.#call(
      () => this.raw.DELETE('/v1/outcome-sources/{id}', { params: { path: { id } }, signal: options.signal }),
      false,
      options,
    );
  }

  /** One request with retries; its data, or its error answer thrown as a MailverdictError. */
  #call<T>(send: () => Promise<Outcome<T>>, idempotent: boolean, options: CallOptions): Promise<T> {
    return withRetry(
      async () => {
        const { data, error, response } = await send();
        if (!response.ok) throw MailverdictError.fromResponse(response, error);
        return data as T;
      },
      this.#retry,
      { idempotent, signal: options.signal },
    );
  }
}
