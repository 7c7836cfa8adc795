/**
 * `npm run bench:schedule`: re-verification of dashboard lists on a schedule (issue 19 section 2,
 * docs/dashboard.md "Re-verification on a schedule"), for lists of 10,000, 100,000 and 500,000
 * rows, each in a child process of its own (so its peak RSS is its own). Per list, on a real
 * store through the dashboard harness (test/dashboard/dashboard-kit.ts: the dashboard API, the
 * scheduler's tick, live jobs through an injected chunk verifier, no network):
 *   a  setting the schedule (the kept copy)          PUT /jobs/:id/schedule
 *   b  making the run (its submission)               the tick that makes it
 *   c  the comparison with the previous run          the tick that compares it
 * each in seconds and rows/s, and during each, the latency of a small write made every 20 ms
 * through another connection (bench/kit/write-pulse.ts): on SQLite its worst case is how long
 * the step holds the writer lock. Prints the verdict changes it got against those expected.
 *
 *   npm run bench:schedule                                  SQLite, 10,000 / 100,000 / 500,000
 *   npm run bench:schedule -- --rows 10000,100000           other sizes
 *   npm run bench:schedule -- --database-url postgres://postgres@127.0.0.1:5432/test
 * (PostgreSQL also when MAILVERDICT_TEST_STORE=postgres and MAILVERDICT_TEST_DATABASE_URL are
 * set, as for the tests; each list in a schema of its own.)
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
// Types only (erased): the modules themselves are loaded once the environment is set.
import type { Status } from '../src/engine/types.js';
import type { ResultRow } from '../src/store/chunk-codec.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000,100000,500000' },
    'database-url': { type: 'string' },
    child: { type: 'boolean', default: false },
    'timeout-seconds': { type: 'string', default: '600' },
  },
});

const PULSE_EVERY_MS = 20;
const DAY_MS = 24 * 60 * 60 * 1000;

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

function quantile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** A write pulse through another connection while `fn` runs: its latencies (ms) during `fn`. */
async function withPulse<T>(
  target: { file?: string; url?: string },
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; pulse: { n: number; p50: number; p99: number; max: number } }> {
  // Through tsx's API: on Node 20 a worker thread does not inherit the `--import tsx` hooks.
  const pulse = new URL('./kit/write-pulse.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then((tsx) => tsx.tsImport(${JSON.stringify(pulse)}, ${JSON.stringify(import.meta.url)}))`;
  const worker = new Worker(boot, {
    eval: true,
    workerData: { ...target, everyMs: PULSE_EVERY_MS, maxMs: 15 * 60_000, maxWrites: 60_000 },
  });
  const messages: unknown[] = [];
  let wake: (() => void) | null = null;
  worker.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  worker.on('error', (err) => {
    messages.push({ error: err });
    wake?.();
  });
  const next = async (): Promise<unknown> => {
    const deadline = Date.now() + 60_000;
    while (messages.length === 0) {
      if (Date.now() > deadline) throw new Error('the write pulse did not answer');
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 1000);
      });
    }
    return messages.shift();
  };
  const ready = await next();
  if (ready !== 'ready')
    throw new Error(`the write pulse failed: ${String((ready as { error: unknown }).error)}`);
  // A few writes before the step, so that the pulse is running when it starts.
  await new Promise((r) => setTimeout(r, 200));
  const started = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  const ended = performance.timeOrigin + performance.now();
  await new Promise((r) => setTimeout(r, 100));
  worker.postMessage('stop');
  const answer = (await next()) as { latencies?: [number, number][]; error?: unknown };
  await worker.terminate();
  if (!answer.latencies) throw new Error(`the write pulse failed: ${String(answer.error)}`);
  // The writes that overlapped the step.
  const during = answer.latencies
    .filter(([at, lat]) => at + lat >= started && at <= ended)
    .map(([, lat]) => lat)
    .sort((a, b) => a - b);
  return {
    value,
    ms,
    pulse: {
      n: during.length,
      p50: quantile(during, 0.5),
      p99: quantile(during, 0.99),
      max: during.at(-1) ?? NaN,
    },
  };
}

interface StepFigures {
  ms: number;
  pulse: { n: number; p50: number; p99: number; max: number };
  rssMiB: number;
}

interface ChildReport {
  rows: number;
  backend: string;
  uploadMs: number;
  drainMs: number;
  steps: { schedule: StepFigures; run: StepFigures; compare: StepFigures };
  got: { becameUndeliverable: number; becameDeliverable: number; changedRows: number; counts: unknown };
  expected: { becameUndeliverable: number; becameDeliverable: number };
  peakRssMiB: number;
}

function rssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** One list of `rows` rows, in this process. */
async function child(rows: number, databaseUrl: string | undefined): Promise<ChildReport> {
  if (databaseUrl !== undefined) {
    process.env.MAILVERDICT_TEST_DATABASE_URL = databaseUrl;
    process.env.MAILVERDICT_TEST_STORE = 'postgres';
  }
  const onPostgres = process.env.MAILVERDICT_TEST_STORE === 'postgres';
  // After the environment is set: the test kit reads it when loaded.
  const { API, createDashboardHarness } = await import('../test/kit/dashboard-kit.js');
  const { createScheduler } = await import('../src/jobs/scheduler.js');
  const { databasePath } = await import('../src/store/db.js');
  const { default: pino } = await import('pino');

  // Upload: every tenth address undeliverable. The run: i % 20 == 0 became undeliverable and
  // i % 20 == 19 became deliverable (i % 20 == 9 stays undeliverable).
  let phase: 0 | 1 = 0;
  const statusOf = (i: number): Status =>
    phase === 0
      ? i % 10 === 9
        ? 'undeliverable'
        : 'deliverable'
      : i % 20 === 9 || i % 20 === 0
        ? 'undeliverable'
        : 'deliverable';
  const verifyChunk = (_job: unknown, emails: readonly string[]): Promise<ResultRow[]> =>
    Promise.resolve(
      emails.map((e): ResultRow => {
        const status = statusOf(Number(e.slice(1, e.indexOf('@'))));
        return {
          status,
          score: status === 'deliverable' ? 99 : 0,
          reason: status === 'undeliverable' ? 'smtp_rejected' : null,
          valid: status === 'deliverable',
          provider: null,
        };
      }),
    );
  let expectedUndeliverable = 0;
  let expectedDeliverable = 0;
  for (let i = 0; i < rows; i++) {
    if (i % 20 === 0) expectedUndeliverable++;
    if (i % 20 === 19) expectedDeliverable++;
  }

  const h = await createDashboardHarness({
    flags: { plans: '{"free":{"monthly_quota":5000000}}' },
    verifyChunk,
  });
  try {
    const { ctx } = h.runtime;
    const target = onPostgres ? { url: ctx.config.databaseUrl! } : { file: databasePath(ctx.config.dataDir) };
    const { browser } = await h.signedIn();
    const lines = ['name,email,city'];
    for (let i = 0; i < rows; i++) lines.push(`Person ${i},p${i}@example.com,City ${i % 97}`);
    const q = new URLSearchParams({ name: 'people.csv', email_column: '1', header: 'true', mode: 'live' });
    let t = performance.now();
    const uploaded = await browser.request('POST', `${API}/lists?${q.toString()}`, {
      raw: { type: 'text/csv', payload: lines.join('\r\n') },
    });
    if (uploaded.statusCode !== 202)
      throw new Error(`upload answered ${uploaded.statusCode}: ${uploaded.body}`);
    const jobId = uploaded.json<{ job_id: string }>().job_id;
    await h.drain();
    const uploadMs = performance.now() - t;

    const scheduler = createScheduler({
      db: ctx.db,
      clock: ctx.clock,
      config: ctx.config,
      logger: pino({ level: 'silent' }),
    });
    try {
      const a = await withPulse(target, () =>
        browser.request('PUT', `${API}/jobs/${jobId}/schedule`, { body: { every_days: 1 } }),
      );
      if (a.value.statusCode !== 200)
        throw new Error(`schedule answered ${a.value.statusCode}: ${a.value.body}`);
      const schedule = { ms: a.ms, pulse: a.pulse, rssMiB: rssMiB() };

      h.advance(DAY_MS + 60_000);
      const b = await withPulse(target, () => scheduler.runOnce());
      if (b.value.runs !== 1) throw new Error(`the tick made ${JSON.stringify(b.value)}`);
      const run = { ms: b.ms, pulse: b.pulse, rssMiB: rssMiB() };

      phase = 1;
      t = performance.now();
      await h.drain();
      const drainMs = performance.now() - t;

      const c = await withPulse(target, () => scheduler.runOnce());
      if (c.value.compared !== 1) throw new Error(`the tick compared ${JSON.stringify(c.value)}`);
      const compare = { ms: c.ms, pulse: c.pulse, rssMiB: rssMiB() };

      await browser.signIn('owner@example.org');
      const hist = await browser.get(`${API}/jobs/${jobId}/history`);
      const latest = hist.json<{
        runs: {
          job_id: string;
          counts: unknown;
          changes: { became_undeliverable: number; became_deliverable: number } | null;
        }[];
      }>().runs[0]!;
      const changes = await browser.get(`${API}/jobs/${latest.job_id}/changes`);
      if (changes.statusCode !== 200) throw new Error(`changes answered ${changes.statusCode}`);
      const changedRows = changes.body.split('\n').filter((l) => l.trim() !== '').length - 1;
      return {
        rows,
        backend: onPostgres ? 'PostgreSQL' : 'SQLite',
        uploadMs,
        drainMs,
        steps: { schedule, run, compare },
        got: {
          becameUndeliverable: latest.changes?.became_undeliverable ?? -1,
          becameDeliverable: latest.changes?.became_deliverable ?? -1,
          changedRows,
          counts: latest.counts,
        },
        expected: { becameUndeliverable: expectedUndeliverable, becameDeliverable: expectedDeliverable },
        peakRssMiB: rssMiB(),
      };
    } finally {
      await scheduler.stop();
    }
  } finally {
    const url = h.runtime.ctx.config.databaseUrl;
    await h.close();
    if (url) await dropSchema(url);
  }
}

/** Drops the list's PostgreSQL schema (the test kit leaves that to the test run's teardown). */
async function dropSchema(url: string): Promise<void> {
  const options = new URL(url).searchParams.get('options') ?? '';
  const schema = /search_path=(mv_test_[A-Za-z0-9_]+)/.exec(options)?.[1];
  if (schema === undefined) return;
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await admin.end();
  }
}

function runChild(rows: number, timeoutMs: number): Promise<ChildReport | string> {
  const args = [
    '--import',
    'tsx',
    join(import.meta.dirname, 'schedule.bench.ts'),
    '--child',
    '--rows',
    String(rows),
  ];
  if (values['database-url'] !== undefined) args.push('--database-url', values['database-url']);
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGTERM'), timeoutMs);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line !== undefined) resolve(JSON.parse(line) as ChildReport);
      else
        resolve(
          signal === 'SIGTERM' ? `stopped after ${timeoutMs / 1000} s` : `failed (${code ?? signal}): ${out}`,
        );
    });
  });
}

const s = (ms: number) => (ms / 1000).toFixed(2);
const perS = (rows: number, ms: number) => Math.round(rows / (ms / 1000)).toLocaleString('en-US');
// (NaN, when no write overlapped a short step, comes back from the child as null.)
const ms1 = (v: number | null) => (v === null || Number.isNaN(v) ? '-' : v.toFixed(1));
const lat = (p: StepFigures['pulse']) => `${p.n} | ${ms1(p.p50)} | ${ms1(p.p99)} | ${ms1(p.max)}`;

async function main(): Promise<void> {
  const sizes = values.rows.split(',').map((r) => {
    const n = Number(r);
    if (!Number.isInteger(n) || n < 20 || n > 500_000) throw new Error(`--rows: 20 to 500000 each, got ${r}`);
    return n;
  });
  if (values.child) {
    process.stdout.write(`${JSON.stringify(await child(sizes[0]!, values['database-url']))}\n`);
    return;
  }
  const timeoutMs = Number(values['timeout-seconds']) * 1000;
  console.log(`# bench:schedule, ${new Date().toISOString()}`);
  console.log(
    `Node.js ${process.version}; ${os.cpus().length} cores; load average at start ${loadAverage()}`,
  );
  console.log('');
  console.log(
    '| rows | store | step | time (s) | rows/s | writes during | write p50 (ms) | write p99 (ms) | write max (ms) | peak RSS so far (MiB) |',
  );
  console.log('|---:|---|---|---:|---:|---:|---:|---:|---:|---:|');
  const checks: string[] = [];
  for (const rows of sizes) {
    const r = await runChild(rows, timeoutMs);
    if (typeof r === 'string') {
      console.log(`| ${rows.toLocaleString('en-US')} | | ${r} | | | | | | | |`);
      continue;
    }
    const n = rows.toLocaleString('en-US');
    for (const [name, step] of [
      ['a. set the schedule (kept copy)', r.steps.schedule],
      ['b. make the run (submission)', r.steps.run],
      ['c. compare with the previous run', r.steps.compare],
    ] as const)
      console.log(
        `| ${n} | ${r.backend} | ${name} | ${s(step.ms)} | ${perS(rows, step.ms)} | ${lat(step.pulse)} | ${step.rssMiB.toFixed(0)} |`,
      );
    const ok =
      r.got.becameUndeliverable === r.expected.becameUndeliverable &&
      r.got.becameDeliverable === r.expected.becameDeliverable &&
      r.got.changedRows === r.expected.becameUndeliverable + r.expected.becameDeliverable;
    checks.push(
      `- ${n} rows (${r.backend}): became undeliverable ${r.got.becameUndeliverable} (expected ${r.expected.becameUndeliverable}), ` +
        `became deliverable ${r.got.becameDeliverable} (expected ${r.expected.becameDeliverable}), ` +
        `changed rows downloaded ${r.got.changedRows}, run counts ${JSON.stringify(r.got.counts)}: ${ok ? 'right' : 'WRONG'}; ` +
        `upload + first verification ${s(r.uploadMs)} s, the run's verification ${s(r.drainMs)} s, peak RSS ${r.peakRssMiB.toFixed(0)} MiB`,
    );
    if (!ok) process.exitCode = 1;
  }
  console.log('');
  for (const c of checks) console.log(c);
  console.log(`\nload average at end ${loadAverage()}`);
}

await main();
