/**
 * Issue 7, fault injection: SIGTERM reaches `serve` while a 500,000-address batch is being
 * uploaded. An upload that keeps coming is finished within the shutdown grace: 202, and the job
 * runs to completion after a restart. One that stalls past the grace is cut: the client sees the
 * connection fail (or a 503 with Retry-After), and nothing of it is stored. Never a half-stored
 * job: after a restart on the same data directory every job has all of its addresses stored and
 * none is left unfinished. Real `serve` child processes on a real data directory, a test key (no
 * network), the body streamed over a real socket.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import {
  callApi,
  exitWithin,
  killServes,
  loggedErrors,
  SHUTDOWN_GRACE_MS,
  startServe,
  stopServe,
  type ServeChild,
} from './serve-child.js';

/** The contract's largest batch. */
const TOTAL = 500_000;
/** SIGTERM goes out once this much of the body (about 13.5 MiB in all) has been written. */
const SIGTERM_AFTER_BYTES = 4 * 1024 * 1024;
/** 5,000 addresses per chunk: 100 chunks to process after the restart instead of 500. */
const SETTINGS = { MAILVERDICT_CHUNK_SIZE: '5000' };

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-sigterm-submit-'));
});
afterEach(() => {
  killServes();
  rmSync(dataDir, { recursive: true, force: true });
});
afterAll(killServes);

type Outcome =
  | { kind: 'response'; status: number; headers: http.IncomingHttpHeaders; body: string }
  | { kind: 'error'; error: Error };

/**
 * POSTs `{"emails": [...TOTAL addresses]}` in 64 KiB writes (chunked encoding), honouring back
 * pressure. `atBytes` runs once that much is written; `stall` then stops writing for good.
 */
function submitStreaming(
  serve: ServeChild,
  key: string,
  options: { atBytes: () => void; stall: boolean },
): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(`${serve.url}/v1/verify/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    let settled = false;
    const settle = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    req.on('error', (error) => settle({ kind: 'error', error }));
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => settle({ kind: 'response', status: res.statusCode!, headers: res.headers, body }));
      res.on('error', (error) => settle({ kind: 'error', error }));
    });
    const write = async (): Promise<void> => {
      let written = 0;
      let signalled = false;
      let piece = '{"notify_email":false,"emails":[';
      for (let i = 0; i < TOTAL; i++) {
        piece += `${i === 0 ? '' : ','}"user${i}@${i % 3 === 0 ? 'valid' : 'invalid'}.example.com"`;
        if (piece.length < 64 * 1024 && i < TOTAL - 1) continue;
        if (i === TOTAL - 1) piece += ']}';
        if (settled || req.destroyed) return;
        written += piece.length;
        const flowing = req.write(piece);
        piece = '';
        if (!signalled && written >= SIGTERM_AFTER_BYTES) {
          signalled = true;
          options.atBytes();
          if (options.stall) return;
        }
        if (!flowing) await drained(req);
      }
      req.end();
    };
    write().catch((error: Error) => settle({ kind: 'error', error }));
  });
}

/** Resolves on 'drain', or on 'close' when the request ends first; leaves no listener behind. */
function drained(req: http.ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

/** The 503 envelope, when the server answered instead of cutting the connection. */
function expectRetryable(outcome: Extract<Outcome, { kind: 'response' }>): void {
  expect(outcome.status).toBe(503);
  expect(JSON.parse(outcome.body)).toMatchObject({ error: 'service_unavailable' });
  expect(outcome.headers['retry-after']).toBeDefined();
}

interface StoredJob {
  id: string;
  total: number;
  chunk_count: number;
  chunks: number;
  stored: number;
}

/** Every job of the data directory with the chunks and addresses actually stored for it. */
async function storedJobs(): Promise<StoredJob[]> {
  const db = openDatabase({ dataDir });
  try {
    const rows = await db
      .selectFrom('jobs')
      .leftJoin('job_chunks', 'job_chunks.job_id', 'jobs.id')
      .select((eb) => [
        'jobs.id',
        'jobs.total',
        'jobs.chunk_count',
        eb.fn.count<number>('job_chunks.seq').as('chunks'),
        eb.fn.coalesce(eb.fn.sum<number>('job_chunks.size'), eb.lit(0)).as('stored'),
      ])
      .groupBy('jobs.id')
      .execute();
    return rows.map((r) => ({ ...r, chunks: Number(r.chunks), stored: Number(r.stored) }));
  } finally {
    await db.destroy();
  }
}

interface JobView {
  job_id: string;
  status: string;
  total: number;
  processed?: number;
}

/** Restarts serve on the data directory and waits (at most 30 s) until no listed job is unfinished. */
async function restartAndSettle(key: string): Promise<JobView[]> {
  const serve = await startServe(dataDir, SETTINGS);
  let jobs: JobView[] = [];
  const deadline = performance.now() + 30_000;
  for (;;) {
    const res = await callApi(`${serve.url}/v1/jobs?limit=100`, key);
    expect(res.status).toBe(200);
    jobs = ((await res.json()) as { jobs: JobView[] }).jobs;
    if (jobs.every((j) => j.status === 'completed' || j.status === 'failed')) break;
    if (performance.now() > deadline) throw new Error(`jobs still running: ${JSON.stringify(jobs)}`);
    await sleep(250);
  }
  expect((await stopServe(serve, SHUTDOWN_GRACE_MS + 5_000)).code).toBe(0);
  expect(loggedErrors(serve)).toEqual([]);
  return jobs;
}

describe('SIGTERM during a 500,000-address submission', () => {
  it('lets an upload that keeps coming finish within the grace: 202, and the job completes after a restart', async () => {
    const serve = await startServe(dataDir, SETTINGS);
    const key = serve.testKey!;
    let signalledAt = 0;
    const outcome = await submitStreaming(serve, key, {
      stall: false,
      atBytes: () => {
        signalledAt = performance.now();
        serve.child.kill('SIGTERM');
      },
    });
    expect(signalledAt).toBeGreaterThan(0);
    expect(await exitWithin(serve, SHUTDOWN_GRACE_MS + 5_000)).toBe(0);
    expect(loggedErrors(serve)).toEqual([]);

    // Reading the remaining 9.5 MiB and storing the job took 0.4 s here: far inside the grace.
    expect(outcome).toMatchObject({ kind: 'response', status: 202 });
    const accepted = JSON.parse((outcome as { body: string }).body) as { job_id: string; total: number };
    expect(accepted.total).toBe(TOTAL);

    // The first process stopped its workers before the upload ended: the restarted one runs the job.
    expect(await restartAndSettle(key)).toEqual([
      expect.objectContaining({
        job_id: accepted.job_id,
        status: 'completed',
        total: TOTAL,
        processed: TOTAL,
      }),
    ]);
    expect(await storedJobs()).toEqual([
      expect.objectContaining({ id: accepted.job_id, total: TOTAL, chunks: 100, stored: TOTAL }),
    ]);
  }, 120_000);

  it('answers an upload stalled past the grace 503 with Retry-After, exits, and stores nothing', async () => {
    const serve = await startServe(dataDir, SETTINGS);
    const key = serve.testKey!;
    let signalledAt = 0;
    const outcome = await submitStreaming(serve, key, {
      stall: true,
      atBytes: () => {
        signalledAt = performance.now();
        serve.child.kill('SIGTERM');
      },
    });
    expect(await exitWithin(serve, SHUTDOWN_GRACE_MS + 5_000)).toBe(0);
    expect(loggedErrors(serve)).toEqual([]);
    // Held for the grace, then refused with an answer the client can act on: neither at once nor never.
    expect(performance.now() - signalledAt).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 500);
    expect(outcome.kind).toBe('response');
    if (outcome.kind === 'response') expectRetryable(outcome);

    expect(await restartAndSettle(key)).toEqual([]);
    expect(await storedJobs()).toEqual([]);
  }, 120_000);
});
