/**
 * The API harness (test/api/harness.ts) plus a worker on the same store, for batch tests:
 * submit through `app.inject()`, run the worker to completion with `drain()`, read back.
 */
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { createChunkVerifier, type ChunkVerifier } from '../../src/jobs/chunk-verifier.js';
import { Worker } from '../../src/jobs/worker.js';
import { createHarness, type Harness, type HarnessOptions } from '../api/harness.js';

export interface JobsHarness extends Harness {
  worker: Worker;
  submit(key: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  job(key: string, id: string): Promise<LightMyRequestResponse>;
  results(key: string, id: string, format?: 'csv' | 'json'): Promise<LightMyRequestResponse>;
  /** Runs the worker until no chunk is left; returns the number of chunks processed. */
  drain(): Promise<number>;
}

export interface JobsHarnessOptions extends HarnessOptions {
  /** Replaces the chunk verifier (default: test mode through the real engine's offline checks, no live engine). */
  verifyChunk?: ChunkVerifier;
}

export async function createJobsHarness(options: JobsHarnessOptions = {}): Promise<JobsHarness> {
  const h = await createHarness(options);
  const { ctx } = h.runtime;
  const worker = new Worker({
    db: ctx.db,
    clock: ctx.clock,
    config: ctx.config,
    logger: pino({ level: 'silent' }),
    verifyChunk:
      options.verifyChunk ??
      createChunkVerifier({
        verifier: ctx.verifier,
        batchEngine: null,
        testDomain: ctx.config.testDomain,
        testModeChunkDelayMs: 0,
      }),
  });
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  return {
    ...h,
    worker,
    submit: (key, body, headers = {}) =>
      h.inject({
        method: 'POST',
        url: '/v1/verify/batch',
        headers: { ...auth(key), 'content-type': 'application/json', ...headers },
        payload: JSON.stringify(body),
      }),
    job: (key, id) => h.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: auth(key) }),
    results: (key, id, format) =>
      h.inject({
        method: 'GET',
        url: `/v1/jobs/${id}/results${format === undefined ? '' : `?format=${format}`}`,
        headers: auth(key),
      }),
    async drain() {
      let n = 0;
      while (await worker.runOnce()) n++;
      return n;
    },
    async close() {
      await worker.stop();
      await h.close();
    },
  };
}

/** The addresses of `n` distinct test-mode fixtures, cycling valid / invalid / disposable / other. */
export function fixtureEmails(n: number, domain = 'example.com'): string[] {
  const kinds = [`valid.${domain}`, `invalid.${domain}`, `disposable.${domain}`, 'elsewhere.org'];
  return Array.from({ length: n }, (_, i) => `user${i}@${kinds[i % kinds.length]}`);
}

export interface ResultJsonRow {
  index: number;
  email: string;
  status: string;
  score: number;
  reason: string | null;
}

export interface ResultsJson {
  job_id: string;
  results: ResultJsonRow[];
  request_id: string;
}
