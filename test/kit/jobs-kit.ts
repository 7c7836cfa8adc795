/**
 * The API harness (test/kit/api-harness.ts) plus a worker on the same store, for batch tests:
 * submit through `app.inject()`, run the worker to completion with `drain()`, read back.
 */
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { createChunkVerifier, type ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { createWorker, type Worker, type WorkerDeps } from '../../src/jobs/worker.js';
import type { AppContext } from '../../src/context.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { batchEngineOptions } from '../../src/config.js';
import { accountLookup } from '../../src/services/outcomes/account-data.js';
import { createHarness, type Harness, type HarnessOptions } from './api-harness.js';

export interface JobsHarness extends Harness {
  worker: Worker;
  submit(key: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  job(key: string, id: string): Promise<LightMyRequestResponse>;
  results(key: string, id: string, format?: 'csv' | 'json'): Promise<LightMyRequestResponse>;
  /** Runs the worker until no chunk is left; returns the number of chunks processed. */
  drain(): Promise<number>;
  /** Moves the harness's ManualClock. */
  advance(ms: number): void;
  /** A second account with its own keys, on the same store. */
  createOtherAccount(): Promise<{ accountId: string; liveKey: string; testKey: string }>;
}

/**
 * The worker of `serve` (createWorker) on the harness's context, verifying chunks in test mode through the real engine's
 * offline checks (no live engine), unless `overrides` says otherwise (another store, a chunk
 * verifier, metrics).
 */
export function harnessWorker(h: Harness, overrides: Partial<WorkerDeps> = {}): Worker {
  const { ctx } = h.runtime;
  return createWorker({
    db: ctx.db,
    clock: ctx.clock,
    config: ctx.config,
    logger: pino({ level: 'silent' }),
    verifyChunk: createChunkVerifier({
      verifier: ctx.verifier,
      dnsTrust: ctx.dnsTrust,
      batchEngine: null,
      testDomain: ctx.config.testDomain,
      testModeChunkDelayMs: 0,
    }),
    ...overrides,
  });
}

export interface JobsHarnessOptions extends HarnessOptions {
  /** Replaces the chunk verifier (default: test mode through the real engine's offline checks, no live engine). */
  verifyChunk?: ChunkVerifier;
}

export async function createJobsHarness(options: JobsHarnessOptions = {}): Promise<JobsHarness> {
  const h = await createHarness(options);
  const { ctx } = h.runtime;
  const worker = harnessWorker(
    h,
    options.verifyChunk === undefined ? {} : { verifyChunk: options.verifyChunk },
  );
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
    advance(ms) {
      if (!(h.clock instanceof ManualClock)) throw new Error('advance() needs a ManualClock');
      h.clock.advance(ms);
    },
    async createOtherAccount() {
      const account = await createAccount(ctx.db, h.clock, { email: 'other@example.org', rateLimit: 1000 });
      const live = await createKey(ctx.db, h.clock, { accountId: account.id, kind: 'live' });
      const test = await createKey(ctx.db, h.clock, { accountId: account.id, kind: 'test' });
      return { accountId: account.id, liveKey: live.key, testKey: test.key };
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
  provider: string | null;
}

export interface ResultsJson {
  job_id: string;
  results: ResultJsonRow[];
  request_id: string;
}

/**
 * The live chunk verifier `serve` builds (jobs/embedded.ts), on `ctx` and a batch engine of the
 * test's own: the account's outcomes and filters, the result cache and the resolver's trust.
 */
export function liveChunkVerifier(ctx: AppContext, batchEngine: BatchEngine): ChunkVerifier {
  return createChunkVerifier({
    verifier: ctx.verifier,
    batchEngine,
    testDomain: ctx.config.testDomain,
    testModeChunkDelayMs: 0,
    resultCache: ctx.resultCache ?? null,
    accountData: accountLookup(ctx),
    verdictLog: ctx.verdictLog,
    dnsTrust: ctx.dnsTrust,
  });
}

/**
 * A jobs harness whose worker verifies live, as `serve`'s does: liveChunkVerifier on a batch
 * engine of the harness's own, closed with it.
 */
export async function createLiveJobsHarness(options: HarnessOptions = {}): Promise<JobsHarness> {
  // The worker is built with the harness, the verifier after it (it needs the harness's context).
  const bound: { verify?: ChunkVerifier } = {};
  const h = await createJobsHarness({ ...options, verifyChunk: (...args) => bound.verify!(...args) });
  const engine = createBatchEngine(batchEngineOptions(h.runtime.ctx.config));
  bound.verify = liveChunkVerifier(h.runtime.ctx, engine);
  return {
    ...h,
    async close() {
      await engine.close();
      await h.close();
    },
  };
}
