/** Batch helpers that need more than one request: waiting for a job, and its rows as a stream. */
import { JSONParser } from '@streamparser/json';
import { sleep } from './retry.js';
import type { Job, ResultRow } from './types.js';

export interface WaitOptions {
  /** First wait between two polls (default 1 s). */
  initialIntervalMs?: number;
  /** The wait grows by `factor` (default 1.5) after each poll, up to this (default 30 s). */
  maxIntervalMs?: number;
  factor?: number;
  /** Give up (rejects with a TimeoutError) after this long; default: wait as long as it takes. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Each poll's job, e.g. to show `processed` of `total`. */
  onPoll?: (job: Job) => void;
}

/** A job that has ended: `completed` (results ready) or `failed` (`error` says why). */
export type EndedJob = Job & { status: 'completed' | 'failed' };

export function hasEnded(job: Job): job is EndedJob {
  return job.status === 'completed' || job.status === 'failed';
}

/** Polls `get` with a growing interval until the job has ended. */
export async function waitFor(get: () => Promise<Job>, options: WaitOptions = {}): Promise<EndedJob> {
  const signals = [
    options.signal,
    options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs),
  ];
  const signal = AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
  let interval = options.initialIntervalMs ?? 1000;
  for (;;) {
    signal.throwIfAborted();
    const job = await get();
    options.onPoll?.(job);
    if (hasEnded(job)) return job;
    await sleep(interval, signal);
    interval = Math.min(options.maxIntervalMs ?? 30_000, interval * (options.factor ?? 1.5));
  }
}

/**
 * The rows of a `GET /v1/jobs/:id/results?format=json` body, one at a time as the bytes arrive:
 * the server streams the document and a job may hold 500,000 rows, so nothing waits for (or
 * holds) the whole body.
 */
export async function* streamRows(body: ReadableStream<Uint8Array>): AsyncGenerator<ResultRow> {
  const parser = new JSONParser({ paths: ['$.results.*'], keepStack: false });
  const ready: ResultRow[] = [];
  parser.onValue = ({ value }) => ready.push(value as unknown as ResultRow);
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.write(value);
      yield* ready.splice(0);
    }
    // A body cut short (the connection lost mid-document) must not pass for all the rows.
    if (!parser.isEnded) throw new Error('the results ended before the end of the JSON document');
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
