/**
 * Issue 7, fault injection: SIGTERM reaches `serve` while a client downloads the results of a
 * big job. A download that keeps reading finishes within the shutdown grace; one that stalls past
 * it is cut, visibly: the chunked body never gets its last chunk, so the client knows it holds
 * a prefix, never a silently short file. After a restart the same download is complete and
 * identical to a fresh one. Real `serve` child processes, a real data directory, a test key.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callApi,
  killServes,
  loggedErrors,
  SHUTDOWN_GRACE_MS,
  startServe,
  stopServe,
  type ServeChild,
} from './serve-child.js';

/**
 * 200,000 rows make an 11 MB CSV. Loopback socket buffers took about 4 MB of a download whose
 * client had stopped reading (measured here): a 50,000-row file (2.8 MB) fitted in them whole,
 * so the server had finished writing before the grace began and there was nothing left to cut.
 */
const ROWS = 200_000;
/** 5,000 addresses per chunk: 40 chunks to process instead of 200. */
const SETTINGS = { MAILVERDICT_CHUNK_SIZE: '5000' };
/** The client reads this much, then stops reading while serve gets its SIGTERM. */
const READ_BEFORE_PAUSE = 64 * 1024;

const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-sigterm-download-'));
let key: string;
let jobId: string;
/** The complete CSV, downloaded before any fault. */
let full: Buffer;

afterAll(() => {
  killServes();
  rmSync(dataDir, { recursive: true, force: true });
});

async function fetchResults(serve: ServeChild): Promise<Buffer> {
  const res = await callApi(`${serve.url}/v1/jobs/${jobId}/results`, key);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

beforeAll(async () => {
  const serve = await startServe(dataDir, SETTINGS);
  key = serve.testKey!;
  const emails = Array.from(
    { length: ROWS },
    (_, i) => `user${i}@${['valid', 'invalid', 'disposable'][i % 3]}.example.com`,
  );
  const submitted = await callApi(`${serve.url}/v1/verify/batch`, key, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ emails, notify_email: false }),
  });
  expect(submitted.status).toBe(202);
  jobId = ((await submitted.json()) as { job_id: string }).job_id;
  let status = '';
  for (let i = 0; i < 120 && status !== 'completed'; i++) {
    await sleep(250);
    const job = await callApi(`${serve.url}/v1/jobs/${jobId}`, key);
    status = ((await job.json()) as { status: string }).status;
  }
  expect(status).toBe('completed');
  full = await fetchResults(serve);
  // Header, one line per row, and the empty string after the last CRLF.
  expect(full.toString('latin1').split('\r\n')).toHaveLength(ROWS + 2);
  expect((await stopServe(serve, SHUTDOWN_GRACE_MS)).code).toBe(0);
}, 60_000);

interface Downloaded {
  status: number | undefined;
  chunked: boolean;
  body: Buffer;
  /** Node's `IncomingMessage.complete`: the terminating chunk was read. */
  complete: boolean;
  error: Error | null;
}

interface Download {
  /** Resolves once READ_BEFORE_PAUSE bytes have arrived and the client has stopped reading. */
  paused: Promise<void>;
  resume(): void;
  /** Resolves when the response has ended, cleanly or not. */
  done: Promise<Downloaded>;
}

function startDownload(serve: ServeChild): Download {
  let response: http.IncomingMessage | undefined;
  let onPaused = (): void => undefined;
  const paused = new Promise<void>((resolve) => (onPaused = resolve));
  const done = new Promise<Downloaded>((resolve, reject) => {
    const req = http.get(`${serve.url}/v1/jobs/${jobId}/results`, {
      headers: { authorization: `Bearer ${key}` },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      let received = 0;
      let error: Error | null = null;
      res.on('data', (d: Buffer) => {
        parts.push(d);
        received += d.length;
        if (response === undefined && received >= READ_BEFORE_PAUSE) {
          response = res.pause();
          onPaused();
        }
      });
      res.on('error', (e) => (error = e));
      res.on('close', () =>
        resolve({
          status: res.statusCode,
          chunked: res.headers['transfer-encoding'] === 'chunked',
          body: Buffer.concat(parts),
          complete: res.complete,
          error,
        }),
      );
    });
  });
  return { paused, resume: () => void response?.resume(), done };
}

describe('SIGTERM during a results download', () => {
  it('lets a download that keeps reading finish within the grace, complete', async () => {
    const serve = await startServe(dataDir, SETTINGS);
    const download = startDownload(serve);
    await download.paused;
    const stopping = stopServe(serve, SHUTDOWN_GRACE_MS + 5_000);
    await sleep(500);
    download.resume();
    const got = await download.done;
    expect(got).toMatchObject({ status: 200, chunked: true, complete: true, error: null });
    expect(got.body.equals(full)).toBe(true);
    const stopped = await stopping;
    expect(stopped.code).toBe(0);
    // Out as soon as the response was done, not at the end of the grace.
    expect(stopped.ms).toBeLessThan(SHUTDOWN_GRACE_MS);
    expect(loggedErrors(serve)).toEqual([]);
  }, 30_000);

  it('cuts a download stalled past the grace visibly, and serves it whole after a restart', async () => {
    const serve = await startServe(dataDir, SETTINGS);
    const download = startDownload(serve);
    await download.paused;
    const stopped = await stopServe(serve, SHUTDOWN_GRACE_MS + 5_000);
    expect(stopped.code).toBe(0);
    // Held for the grace, then cut: neither at once nor never.
    expect(stopped.ms).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 500);
    expect(loggedErrors(serve)).toEqual([]);

    download.resume();
    const got = await download.done;
    expect(got).toMatchObject({ status: 200, chunked: true, complete: false });
    expect(got.error?.message).toMatch(/aborted|ECONNRESET/);
    expect(got.body.length).toBeLessThan(full.length);
    expect(full.subarray(0, got.body.length).equals(got.body)).toBe(true);

    const again = await startServe(dataDir, SETTINGS);
    expect((await fetchResults(again)).equals(full)).toBe(true);
    expect((await stopServe(again, SHUTDOWN_GRACE_MS)).code).toBe(0);
  }, 40_000);
});
