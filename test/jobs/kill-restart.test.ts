/**
 * Durability, the real way: the `serve` process is SIGKILLed in the middle of a job and
 * started again on the same data directory; the job must complete with exactly one row per
 * submitted address, in order. Test-key job with 10-address chunks and a 100 ms pause per
 * chunk (MAILVERDICT_TEST_MODE_CHUNK_DELAY_MS) so that it runs for a few seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, spawnServe } from '../kit/cli.js';
import { openDatabase } from '../../src/store/db.js';

const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-kill-'));
const children: ChildProcess[] = [];

interface Listening {
  child: ChildProcess;
  url: string;
  testKey?: string;
}

async function startServe(): Promise<Listening> {
  const serve = await spawnServe(['--port', '0', '--data-dir', dataDir], {
    env: cleanEnv({
      MAILVERDICT_CHUNK_SIZE: '10',
      MAILVERDICT_CHUNK_CONCURRENCY: '2',
      MAILVERDICT_TEST_MODE_CHUNK_DELAY_MS: '100',
      MAILVERDICT_WORKER_LEASE: '1s',
      MAILVERDICT_WORKER_POLL_INTERVAL: '100ms',
      MAILVERDICT_LOG_LEVEL: 'warn',
    }),
    stderr: 'inherit',
  });
  children.push(serve.child);
  return { child: serve.child, url: serve.url, testKey: serve.keys?.test_key };
}

async function call(url: string, key: string, init: RequestInit = {}): Promise<Response> {
  for (;;) {
    const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
    // The bootstrap account's plan allows a few requests per second; polling may hit it.
    if (res.status !== 429) return res;
    await sleep(300);
  }
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kill and restart', () => {
  it('completes a job interrupted by SIGKILL with exactly one row per address, in order', async () => {
    const first = await startServe();
    const key = first.testKey!;
    const emails = Array.from(
      { length: 400 },
      (_, i) => `user${i}@${i % 3 === 0 ? 'valid' : 'invalid'}.example.com`,
    );
    const submit = await call(`${first.url}/v1/verify/batch`, key, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails, notify_email: false }),
    });
    expect(submit.status).toBe(202);
    const { job_id: jobId } = (await submit.json()) as { job_id: string };

    let processed = 0;
    while (processed === 0) {
      await sleep(200);
      processed =
        ((await (await call(`${first.url}/v1/jobs/${jobId}`, key)).json()) as { processed?: number })
          .processed ?? 0;
    }
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    expect(processed).toBeGreaterThan(0);
    expect(processed).toBeLessThan(emails.length);

    const second = await startServe();
    let job: { status: string; processed: number; total: number } = {
      status: 'queued',
      processed: 0,
      total: 0,
    };
    const deadline = Date.now() + 30_000;
    while (job.status !== 'completed' && Date.now() < deadline) {
      await sleep(300);
      job = (await (await call(`${second.url}/v1/jobs/${jobId}`, key)).json()) as typeof job;
      expect(job.processed).toBeGreaterThanOrEqual(processed);
    }
    expect(job).toMatchObject({ status: 'completed', processed: 400, total: 400 });

    const results = (await (
      await call(`${second.url}/v1/jobs/${jobId}/results?format=json`, key)
    ).json()) as {
      results: { index: number; email: string; status: string }[];
    };
    expect(results.results).toHaveLength(emails.length);
    expect(results.results.map((r) => r.index)).toEqual(emails.map((_, i) => i));
    expect(results.results.map((r) => r.email)).toEqual(emails);
    expect(results.results.map((r) => r.status)).toEqual(
      emails.map((_, i) => (i % 3 === 0 ? 'deliverable' : 'undeliverable')),
    );
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));

    // A chunk that was in flight at the kill was claimed again after its lease expired.
    const db = openDatabase({ dataDir });
    try {
      const chunks = await db
        .selectFrom('job_chunks')
        .select(['state', 'attempts'])
        .where('job_id', '=', jobId)
        .execute();
      expect(chunks.every((c) => c.state === 'done')).toBe(true);
      expect(Math.max(...chunks.map((c) => c.attempts))).toBeGreaterThanOrEqual(2);
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
