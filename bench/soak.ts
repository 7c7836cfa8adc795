/**
 * `npm run soak -- [--duration 10m] [--concurrency 8]`: a bounded mixed load against a real
 * `serve` process on loopback (single verifications, batch submissions, polls, downloads, usage
 * reads, and key creation + revocation through the CLI), for a set duration.
 *
 * Prints requests served, errors by code, p50/p99 per endpoint, and the server's RSS, open file
 * descriptors and SQLite file size at the start, after warm-up and at the end. Then it waits for
 * every submitted job and checks that each has exactly `total` result rows (no lost rows).
 * Targets: zero 5xx, zero lost rows, RSS and handles flat after warm-up.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '../src/config.js';
import { spawnServe } from '../test/kit/cli.js';

const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '10m' }, concurrency: { type: 'string', default: '8' } },
});
const DURATION_MS = parseDuration(args.duration, '--duration');
const CONCURRENCY = Number(args.concurrency);
const ROOT = process.cwd();
const MAIN = join(ROOT, 'dist/cli/main.js');
/** Hard stop whatever happens: the duration plus time to drain the jobs. */
const HARD_LIMIT_MS = DURATION_MS + 5 * 60_000;

interface Server {
  child: ChildProcess;
  url: URL;
  dir: string;
  accountId: string;
  testKey: string;
  liveKey: string;
}

const ENV = {
  ...process.env,
  MAILVERDICT_LOG_LEVEL: 'warn',
  MAILVERDICT_CHUNK_SIZE: '100',
  MAILVERDICT_AUTH_FAILURE_RATE_LIMIT: '0',
  // Live verifications of a domain nobody answers for: DNS fails fast, no SMTP traffic leaves.
  MAILVERDICT_DNS_SERVERS: '127.0.0.1:9',
  MAILVERDICT_DNS_TIMEOUT: '200ms',
  MAILVERDICT_DNS_TRIES: '1',
  MAILVERDICT_PLANS: JSON.stringify({
    free: { rate_limit_per_second: 1_000_000, monthly_quota: 100_000_000 },
  }),
};

async function startServer(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-soak-'));
  const serve = await spawnServe(['--port', '0', '--data-dir', dir], {
    built: true,
    env: ENV,
    stderr: 'inherit',
  });
  if (serve.keys === undefined) throw new Error('serve wrote no bootstrap keys');
  return {
    child: serve.child,
    url: new URL(serve.url),
    dir,
    accountId: serve.keys.account_id,
    testKey: serve.keys.test_key,
    liveKey: serve.keys.live_key,
  };
}

function cli(server: Server, args: string[]): Record<string, unknown> {
  const out = spawnSync(process.execPath, [MAIN, ...args, '--data-dir', server.dir, '--json'], {
    env: ENV,
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`mailverdict ${args.join(' ')} failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as Record<string, unknown>;
}

interface Sample {
  rssMb: number;
  fds: number;
  dbMb: number;
}

function sample(server: Server): Sample {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const fds = readdirSync(`/proc/${server.child.pid}/fd`).length;
  let bytes = 0;
  for (const f of ['mailverdict.db', 'mailverdict.db-wal']) {
    const p = join(server.dir, f);
    if (existsSync(p)) bytes += statSync(p).size;
  }
  return { rssMb: Math.round(rssKb / 1024), fds, dbMb: Math.round(bytes / 1024 / 1024) };
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

interface Res {
  status: number;
  body: string;
}

function call(server: Server, method: string, path: string, key: string, body?: unknown): Promise<Res> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: server.url.hostname,
        port: server.url.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const latencies = new Map<string, number[]>();
const outcomes = new Map<string, number>();
let served = 0;

async function timed(endpoint: string, run: () => Promise<Res>): Promise<Res> {
  const started = performance.now();
  let res: Res;
  try {
    res = await run();
  } catch (err) {
    outcomes.set(`${endpoint} network error`, (outcomes.get(`${endpoint} network error`) ?? 0) + 1);
    throw err;
  }
  const ms = performance.now() - started;
  served++;
  const list = latencies.get(endpoint) ?? [];
  list.push(ms);
  latencies.set(endpoint, list);
  const code =
    res.status < 400
      ? String(res.status)
      : `${res.status} ${(JSON.parse(res.body) as { error: string }).error}`;
  outcomes.set(`${endpoint} ${code}`, (outcomes.get(`${endpoint} ${code}`) ?? 0) + 1);
  return res;
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  console.log(
    `soak ${new Date().toISOString()} duration ${args.duration} concurrency ${CONCURRENCY} load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const hardStop = setTimeout(() => {
    console.error('soak: hard time limit reached');
    process.exit(2);
  }, HARD_LIMIT_MS);
  const server = await startServer();
  const jobs = new Map<string, number>();
  const completed: string[] = [];
  let revocations = 0;
  let revocationFailures = 0;
  try {
    const start = sample(server);
    const started = Date.now();
    const end = started + DURATION_MS;
    let warm: Sample | null = null;
    let n = 0;
    const worker = async (id: number): Promise<void> => {
      while (Date.now() < end) {
        n++;
        if (warm === null && Date.now() - started > Math.min(60_000, DURATION_MS / 5)) warm = sample(server);
        const roll = (n * 7919 + id * 104729) % 100;
        if (roll < 45) {
          await timed('POST /v1/verify (test)', () =>
            call(server, 'POST', '/v1/verify', server.testKey, { email: `soak${n}@valid.example.com` }),
          );
        } else if (roll < 55) {
          await timed('POST /v1/verify (live)', () =>
            call(server, 'POST', '/v1/verify', server.liveKey, {
              email: `soak${n}@no-such-domain.test`,
              timeout_ms: 500,
            }),
          );
        } else if (roll < 60) {
          const size = 50 + (n % 400);
          const res = await timed('POST /v1/verify/batch', () =>
            call(server, 'POST', '/v1/verify/batch', server.testKey, {
              emails: Array.from({ length: size }, (_, i) => `b${n}-${i}@valid.example.com`),
              notify_email: false,
            }),
          );
          if (res.status === 202) jobs.set((JSON.parse(res.body) as { job_id: string }).job_id, size);
        } else if (roll < 80 && jobs.size > 0) {
          const ids = [...jobs.keys()];
          const jobId = ids[n % ids.length]!;
          const res = await timed('GET /v1/jobs/:id', () =>
            call(server, 'GET', `/v1/jobs/${jobId}`, server.testKey),
          );
          if (res.status === 200 && (JSON.parse(res.body) as { status: string }).status === 'completed')
            completed.push(jobId);
        } else if (roll < 90 && completed.length > 0) {
          const jobId = completed[n % completed.length]!;
          await timed('GET /v1/jobs/:id/results', () =>
            call(
              server,
              'GET',
              `/v1/jobs/${jobId}/results?format=${n % 2 === 0 ? 'csv' : 'json'}`,
              server.testKey,
            ),
          );
        } else {
          await timed('GET /v1/account/usage', () =>
            call(server, 'GET', '/v1/account/usage', server.testKey),
          );
        }
      }
    };
    // Key churn: every 10 s a key is created, used, revoked, and must then be refused.
    const churn = async (): Promise<void> => {
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, 10_000));
        if (Date.now() >= end) break;
        const key = cli(server, ['keys', 'create', '--account', server.accountId, '--kind', 'test']) as {
          id: string;
          key: string;
        };
        const ok = await timed('key churn: use', () => call(server, 'GET', '/v1/account/usage', key.key));
        cli(server, ['keys', 'revoke', key.id]);
        const refused = await timed('key churn: after revoke', () =>
          call(server, 'GET', '/v1/account/usage', key.key),
        );
        revocations++;
        if (ok.status !== 200 || refused.status !== 401) revocationFailures++;
      }
    };
    await Promise.all([...Array.from({ length: CONCURRENCY }, (_, i) => worker(i)), churn()]);
    const atEnd = sample(server);
    const seconds = (Date.now() - started) / 1000;

    // Every job must complete with exactly `total` rows.
    let lost = 0;
    let checked = 0;
    for (const [jobId, size] of jobs) {
      let status = '';
      for (let tries = 0; tries < 600 && status !== 'completed' && status !== 'failed'; tries++) {
        const res = await call(server, 'GET', `/v1/jobs/${jobId}`, server.testKey);
        status = (JSON.parse(res.body) as { status: string }).status;
        if (status !== 'completed') await new Promise((r) => setTimeout(r, 200));
      }
      const res = await call(server, 'GET', `/v1/jobs/${jobId}/results?format=json`, server.testKey);
      const rows =
        res.status === 200 ? (JSON.parse(res.body) as { results: { index: number }[] }).results : [];
      const indexes = new Set(rows.map((r) => r.index));
      if (rows.length !== size || indexes.size !== size) lost++;
      checked++;
    }

    console.log(`served ${served} requests in ${seconds.toFixed(0)} s (${(served / seconds).toFixed(0)}/s)`);
    const fivexx = [...outcomes.entries()]
      .filter(([k]) => / 5\d\d /.test(`${k} `))
      .reduce((a, [, v]) => a + v, 0);
    console.log(
      `5xx: ${fivexx}; jobs checked ${checked}, jobs with lost or doubled rows: ${lost}; key revocations ${revocations}, refused on the next request: ${revocations - revocationFailures}`,
    );
    console.log('outcomes:');
    for (const [k, v] of [...outcomes.entries()].sort()) console.log(`  ${k.padEnd(48)} ${v}`);
    console.log('latency (ms):');
    for (const [k, v] of [...latencies.entries()].sort())
      console.log(
        `  ${k.padEnd(32)} n=${String(v.length).padStart(7)} p50 ${pct(v, 50).toFixed(1).padStart(7)} p99 ${pct(v, 99).toFixed(1).padStart(7)}`,
      );
    const show = (label: string, s: Sample | null) =>
      s === null ? '' : `  ${label.padEnd(10)} RSS ${s.rssMb} MB, open fds ${s.fds}, SQLite ${s.dbMb} MB`;
    console.log(
      ['server:', show('start', start), show('warm', warm), show('end', atEnd)].filter(Boolean).join('\n'),
    );
    if (fivexx > 0 || lost > 0 || revocationFailures > 0) process.exitCode = 1;
  } finally {
    clearTimeout(hardStop);
    agent.destroy();
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    rmSync(server.dir, { recursive: true, force: true });
  }
}

await main();
