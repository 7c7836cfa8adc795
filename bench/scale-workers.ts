/**
 * `npm run bench:scale`, part d: one live-mode job verified by 1, 2 and 4 `mailverdict worker`
 * processes on PostgreSQL + Redis, against the fake MTAs and DNS of bench:batch
 * (bench/fake-mta-pipelining.ts in a child process, 20 ms added to every SMTP reply and DNS
 * answer, the domains spread over many MX hosts on 127.0.1.x). Reports addresses per second
 * (submission's 202 to the job seen completed) and the most sessions any MX host saw at once,
 * which must never exceed --per-host-concurrency however many workers run: the workers share
 * their per-host slots through Redis. Each worker count gets a fresh job and a fresh Redis
 * prefix for the workers, so no run inherits the catch-all or DNS answers of the one before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../src/clock.js';
import { createAccount } from '../src/services/accounts/accounts.service.js';
import { createKey } from '../src/services/keys/keys.service.js';
import { openDatabase } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import type { BenchWorld, FakeMtaStats } from './fake-mta-pipelining.js';
import { startBenchChild, type BenchChild } from './kit/bench-child.js';
import {
  REDIS_URL,
  childEnv,
  cpuMicros,
  createBenchSchema,
  fmt,
  redisPrefix,
  startCli,
  stopChild,
  waitFor,
  type CliProcess,
} from './kit/scale.js';

export interface WorkerOptions {
  addresses: number;
  domains: number;
  hosts: number;
  latencyMs: number;
  perHostConcurrency: number;
  chunkSize: number;
  workers: readonly number[];
  /** The longest one job may take before the run gives up. */
  jobTimeoutMs: number;
}

export const WORKER_DEFAULTS: WorkerOptions = {
  addresses: 20_000,
  domains: 200,
  hosts: 20,
  latencyMs: 20,
  perHostConcurrency: 5,
  chunkSize: 500,
  workers: [1, 2, 4],
  jobTimeoutMs: 5 * 60_000,
};

/**
 * The world of bench/batch-probe.bench.ts at a smaller size (that script runs when imported, so
 * its builder is repeated here): 10% unknown mailboxes, 5% catch-all domains, a seeded shuffle.
 */
function buildWorld(o: WorkerOptions): { world: BenchWorld; emails: string[] } {
  const hosts = Array.from({ length: o.hosts }, (_, i) => `127.0.1.${i + 1}`);
  const domains: Record<string, number> = {};
  const catchAllDomains: string[] = [];
  const emails: string[] = [];
  const perDomain = Math.ceil(o.addresses / o.domains);
  for (let d = 0; d < o.domains; d++) {
    const domain = `d${d}.bench-mail.test`;
    domains[domain] = d % o.hosts;
    if (d % 20 === 7) catchAllDomains.push(domain);
    for (let i = 0; i < perDomain && emails.length < o.addresses; i++)
      emails.push(`${i % 10 === 3 ? 'nobody' : 'user'}${i}@${domain}`);
  }
  let seed = 42;
  const random = (): number => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = emails.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [emails[i], emails[j]] = [emails[j]!, emails[i]!];
  }
  return { world: { hosts, latencyMs: o.latencyMs, domains, catchAllDomains, hardErrorLimit: 20 }, emails };
}

type FakeMtas = BenchChild<FakeMtaStats>;

function startFakeMtas(world: BenchWorld): Promise<FakeMtas> {
  return startBenchChild<FakeMtaStats>(new URL('./fake-mta-pipelining.ts', import.meta.url), world);
}

interface RunFigures {
  workers: number;
  seconds: number;
  perSecond: number;
  peakPerHost: number;
  peakAll: number;
  connections: number;
  workerCpuMsPerAddress: number | null;
  statuses: string;
}

/** Runs part d and returns its Markdown table and notes. */
export async function runWorkers(options: WorkerOptions = WORKER_DEFAULTS): Promise<string> {
  const { world, emails } = buildWorld(options);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'mailverdict-bench-scale-workers-'));
  const schema = await createBenchSchema('workers');
  const redisPrefixes = [
    redisPrefix('workers-api'),
    ...options.workers.map((n) => redisPrefix(`workers-${n}`)),
  ];
  const mtas = await startFakeMtas(world);
  const client = new pg.Client({ connectionString: schema.url });
  let serve: CliProcess | null = null;
  const rows: RunFigures[] = [];
  try {
    const db = openDatabase({ dataDir, databaseUrl: schema.url });
    let liveKey: string;
    try {
      await migrateToLatest(db);
      const account = await createAccount(db, systemClock, {
        email: 'bench@example.org',
        plan: 'enterprise',
        rateLimit: 1_000_000,
      });
      liveKey = (await createKey(db, systemClock, { accountId: account.id, kind: 'live' })).key;
    } finally {
      await db.destroy();
    }
    await client.connect();
    const store = ['--data-dir', dataDir, '--database-url', schema.url, '--redis-url', REDIS_URL];
    serve = await startCli(
      [
        'serve',
        '--port',
        '0',
        '--no-bootstrap',
        '--no-embedded-workers',
        ...store,
        '--redis-key-prefix',
        redisPrefixes[0]!.prefix,
      ],
      childEnv({ MAILVERDICT_CHUNK_SIZE: String(options.chunkSize) }),
    );
    const url = serve.event.url as string;
    for (const [i, n] of options.workers.entries()) {
      mtas.reset();
      const workers = await Promise.all(
        Array.from({ length: n }, () =>
          startCli(
            [
              'worker',
              ...store,
              '--redis-key-prefix',
              redisPrefixes[i + 1]!.prefix,
              '--dns-server',
              mtas.dns,
              '--smtp-port',
              String(mtas.port),
              '--allow-internal-targets',
              '--per-host-concurrency',
              String(options.perHostConcurrency),
              '--concurrency',
              '200',
            ],
            childEnv(),
          ),
        ),
      );
      try {
        const cpuBefore = workers.map((w) => cpuMicros(w.child.pid));
        const t0 = performance.now();
        const res = await fetch(`${url}/v1/verify/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ emails, notify_email: false }),
        });
        const body = (await res.json()) as { job_id?: string };
        if (res.status !== 202 || body.job_id === undefined)
          throw new Error(`submission answered ${res.status}: ${JSON.stringify(body)}`);
        const job = await waitFor(
          `job of ${n} workers`,
          async () => {
            const r = await client.query<{ status: string; processed: number }>(
              'select status, processed from jobs where id = $1',
              [body.job_id],
            );
            const row = r.rows[0];
            if (row?.status === 'failed') throw new Error(`job ${body.job_id} failed`);
            return row?.status === 'completed' ? row : undefined;
          },
          options.jobTimeoutMs,
        );
        const seconds = (performance.now() - t0) / 1000;
        if (job.processed !== emails.length)
          throw new Error(`${job.processed} of ${emails.length} processed`);
        const cpuAfter = workers.map((w) => cpuMicros(w.child.pid));
        const cpu = cpuAfter.reduce<number | null>(
          (sum, after, w) =>
            sum === null || after === null || cpuBefore[w] === null ? null : sum + after - cpuBefore[w]!,
          0,
        );
        const stats = await mtas.stats();
        const counts = await client.query<{ valid_count: number; invalid_count: number }>(
          'select valid_count, invalid_count from jobs where id = $1',
          [body.job_id],
        );
        const figures: RunFigures = {
          workers: n,
          seconds,
          perSecond: emails.length / seconds,
          peakPerHost: Math.max(0, ...Object.values(stats.peakConcurrentByHost)),
          peakAll: stats.peakConcurrent,
          connections: stats.connections,
          workerCpuMsPerAddress: cpu === null ? null : cpu / 1000 / emails.length,
          statuses: `${counts.rows[0]?.valid_count} valid, ${counts.rows[0]?.invalid_count} invalid`,
        };
        process.stderr.write(`  workers: ${JSON.stringify(figures)}\n`);
        rows.push(figures);
      } finally {
        await Promise.all(workers.map((w) => stopChild(w.child)));
      }
    }
  } finally {
    if (serve) await stopChild(serve.child);
    await client.end().catch(() => undefined);
    await mtas.close();
    await schema.drop();
    for (const p of redisPrefixes) await p.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return [
    `${fmt(emails.length)} addresses (live key) over ${fmt(options.domains)} domains on ${options.hosts} MX hosts, ` +
      `${options.latencyMs} ms per SMTP reply and DNS answer; chunks of ${options.chunkSize}; each worker ` +
      `\`--per-host-concurrency ${options.perHostConcurrency} --concurrency 200\` (defaults otherwise: 4 chunks at a time).`,
    '',
    '| worker processes | time | addresses/s | most sessions on one host (cap) | most sessions in all | connections | worker CPU per address | verdicts |',
    '|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.workers} | ${r.seconds.toFixed(1)} s | **${fmt(r.perSecond)}** | **${r.peakPerHost}** (${options.perHostConcurrency}) | ` +
        `${r.peakAll} | ${fmt(r.connections)} | ${r.workerCpuMsPerAddress === null ? 'n/a' : `${r.workerCpuMsPerAddress.toFixed(3)} ms`} | ${r.statuses} |`,
    ),
  ].join('\n');
}
