/**
 * Batch benchmark, parts 1 and 3 (part 2, the probe, is bench/batch-probe.bench.ts):
 *   1. POST /v1/verify/batch with 500,000 addresses (test key): time to the 202 and the
 *      server's peak RSS (VmHWM of the serve process).
 *   3. GET /v1/jobs/:id/results of 500,000 rows as CSV and as JSON: time and peak RSS, next
 *      to the same for 50,000 rows, to show that memory does not grow with the job's size.
 * Each measurement runs in a fresh `serve` process (VmHWM only grows), on one temp data dir.
 * Jobs are completed in between by a separate `mailverdict worker` process.
 *
 *   npm run bench:batch          (or: node --import tsx bench/batch-api.bench.ts)
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnCli, spawnServe } from '../test/kit/cli.js';

const SIZES = [50_000, 500_000] as const;
const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-bench-batch-'));
// Its own environment passes on to serve and worker: bench/scale-batch.ts runs it on PostgreSQL that way.
const env = {
  ...process.env,
  MAILVERDICT_LOG_LEVEL: 'warn',
  // Submissions are measured without workers competing for the CPU; a worker process runs the jobs.
  MAILVERDICT_EMBEDDED_WORKERS: 'false',
  // The bootstrap account's plan would throttle the polling below and refuse a 500,000 live batch.
  MAILVERDICT_PLANS: JSON.stringify({ free: { rate_limit_per_second: 1000, monthly_quota: 10_000_000 } }),
};

function spawnWorker(): ChildProcess {
  return spawnCli(['worker', '--data-dir', dataDir, '--json'], env, { stderr: 'inherit' });
}

interface Server {
  child: ChildProcess;
  url: string;
  testKey: string | undefined;
  liveKey: string | undefined;
}

async function startServe(): Promise<Server> {
  // stdout is a pipe: serve leaves the bootstrap keys in an owner-only file.
  const serve = await spawnServe(['--port', '0', '--data-dir', dataDir], { env, stderr: 'inherit' });
  return { child: serve.child, url: serve.url, testKey: serve.keys?.test_key, liveKey: serve.keys?.live_key };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Peak and current resident set size of a process, in MiB, from /proc. */
function memoryOf(pid: number): { peakMiB: number; rssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { peakMiB: Math.round(kib('VmHWM') / 1024), rssMiB: Math.round(kib('VmRSS') / 1024) };
}

function addresses(n: number): string[] {
  const domains = [
    'valid.example.com',
    'invalid.example.com',
    'disposable.example.com',
    'gmail.com',
    'acme.io',
  ];
  return Array.from({ length: n }, (_, i) => `first.last${i}@${domains[i % domains.length]}`);
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function submit(server: Server, key: string, n: number) {
  const body = JSON.stringify({ emails: addresses(n), notify_email: false });
  const before = memoryOf(server.child.pid!);
  const t0 = performance.now();
  const res = await fetch(`${server.url}/v1/verify/batch`, {
    method: 'POST',
    headers: { ...auth(key), 'content-type': 'application/json' },
    body,
  });
  const json = (await res.json()) as { job_id: string };
  const ms = performance.now() - t0;
  if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${JSON.stringify(json)}`);
  return {
    jobId: json.job_id,
    ms,
    bodyMiB: body.length / 2 ** 20,
    idleMiB: before.rssMiB,
    ...memoryOf(server.child.pid!),
  };
}

async function download(server: Server, key: string, jobId: string, format: 'csv' | 'json') {
  const before = memoryOf(server.child.pid!);
  const t0 = performance.now();
  const res = await fetch(`${server.url}/v1/jobs/${jobId}/results?format=${format}`, { headers: auth(key) });
  if (res.status !== 200) throw new Error(`results answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const piece of res.body!) {
    bytes += piece.length;
    if (format === 'csv') for (const b of piece) if (b === 10) lines++;
  }
  const ms = performance.now() - t0;
  return { ms, MiB: bytes / 2 ** 20, lines, idleMiB: before.rssMiB, ...memoryOf(server.child.pid!) };
}

async function waitCompleted(server: Server, key: string, jobId: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const job = (await (await fetch(`${server.url}/v1/jobs/${jobId}`, { headers: auth(key) })).json()) as {
      status: string;
    };
    if (job.status === 'completed') return performance.now() - t0;
    if (job.status === 'failed') throw new Error(`job ${jobId} failed`);
    await sleep(500);
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function main(): Promise<void> {
  console.log(`# batch API benchmark — ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node.js ${process.version}`,
  );
  console.log(`data dir: ${dataDir}\n`);

  // Bootstrap: the first serve creates the account and prints the test key.
  const first = await startServe();
  const key = first.testKey;
  const liveKey = first.liveKey;
  if (key === undefined || liveKey === undefined) throw new Error('no bootstrap keys printed');
  await stop(first.child);

  console.log('## Part 1: submission (fresh serve process per size, no embedded workers)\n');
  console.log('| key | addresses | body MiB | time to 202 (ms) | RSS idle (MiB) | peak RSS (MiB) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const row = (kind: string, n: number, r: Awaited<ReturnType<typeof submit>>) =>
    console.log(
      `| ${kind} | ${n.toLocaleString('en')} | ${fmt(r.bodyMiB, 1)} | ${fmt(r.ms)} | ${r.idleMiB} | ${r.peakMiB} |`,
    );
  const jobs = new Map<number, string>();
  for (const n of SIZES) {
    const server = await startServe();
    const r = await submit(server, key, n);
    jobs.set(n, r.jobId);
    row('test', n, r);
    await stop(server.child);
  }
  {
    // A live key adds the quota count and the marking of repeated addresses. The job is
    // cancelled at once: nothing may probe the internet from this machine.
    const server = await startServe();
    const r = await submit(server, liveKey, SIZES[1]);
    const cancel = await fetch(`${server.url}/v1/jobs/${r.jobId}`, {
      method: 'DELETE',
      headers: auth(liveKey),
    });
    if (cancel.status !== 200) throw new Error(`cancel answered ${cancel.status}`);
    row('live', SIZES[1], r);
    await stop(server.child);
  }

  const worker = spawnWorker();
  const poller = await startServe();
  const t0 = performance.now();
  for (const n of SIZES) await waitCompleted(poller, key, jobs.get(n)!);
  console.log(
    `\n(both test-key jobs, ${(SIZES[0] + SIZES[1]).toLocaleString('en')} addresses, completed by one \`mailverdict worker\` in ${fmt((performance.now() - t0) / 1000, 1)} s)\n`,
  );
  await stop(poller.child);
  await stop(worker);

  console.log('## Part 3: results download (fresh serve process per measurement)\n');
  console.log('| rows | format | MiB | time (ms) | RSS idle (MiB) | peak RSS (MiB) |');
  console.log('|---:|---|---:|---:|---:|---:|');
  for (const format of ['csv', 'json'] as const) {
    for (const n of SIZES) {
      const server = await startServe();
      const r = await download(server, key, jobs.get(n)!, format);
      if (format === 'csv' && r.lines !== n + 1)
        throw new Error(`expected ${n + 1} CSV lines, got ${r.lines}`);
      console.log(
        `| ${n.toLocaleString('en')} | ${format} | ${fmt(r.MiB, 1)} | ${fmt(r.ms)} | ${r.idleMiB} | ${r.peakMiB} |`,
      );
      await stop(server.child);
    }
  }
}

try {
  await main();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
