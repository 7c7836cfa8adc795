/**
 * `npm run bench:api`: the HTTP API under load on this machine. Starts the real server
 * (`mailverdict serve`, a child process, a temp data dir, default settings: info logs included,
 * sent to /dev/null) with an account whose rate limit is far above what the load can reach,
 * and a bare Fastify app returning a constant JSON body (the ceiling), then runs autocannon
 * against each in turn: POST /v1/verify with a test key, GET /v1/account/usage, the ceiling, and
 * (for the analysis, not the ratio) the bare app's POST route with POST /v1/verify's body schema.
 * Besides requests/s and latency it reports the CPU time each server process spent per request
 * (from /proc), which a busy machine disturbs less than throughput.
 *
 *   --duration 30      seconds per run
 *   --connections 50   concurrent connections
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { systemClock } from '../src/clock.js';
import { createAccount } from '../src/services/accounts/accounts.service.js';
import { createKey } from '../src/services/keys/keys.service.js';
import { cleanEnv, ROOT, spawnServe } from '../test/kit/cli.js';
import { openDatabase } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { cpuMicros } from './kit/scale.js';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '30' }, connections: { type: 'string', default: '50' } },
});
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);

/** The ceiling server (bench/ceiling-server.ts): it prints its URL on its first line. */
async function startCeiling(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts'], {
    cwd: ROOT,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [firstLine] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { child, url: firstLine.trim() };
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await once(child, 'exit');
}

interface Figures {
  name: string;
  /** CPU time of the server process per request (µs), less sensitive to a busy machine than requests/s. */
  cpuPerRequest: number | null;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

async function load(name: string, server: ChildProcess, options: autocannon.Options): Promise<Figures> {
  const before = cpuMicros(server.pid);
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...options });
  const after = cpuMicros(server.pid);
  const figures = {
    name,
    cpuPerRequest:
      before === null || after === null
        ? null
        : Math.round((10 * (after - before)) / result.requests.total) / 10,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
  process.stderr.write(`${JSON.stringify(figures)}\n`);
  return figures;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'mailverdict-bench-api-'));
  const db = openDatabase({ dataDir });
  await migrateToLatest(db);
  const account = await createAccount(db, systemClock, {
    email: 'bench@example.org',
    plan: 'enterprise',
    rateLimit: 10_000_000,
  });
  const { key: testKey } = await createKey(db, systemClock, { accountId: account.id, kind: 'test' });
  await db.destroy();

  const api = await spawnServe(['--port', '0', '--data-dir', dataDir, '--no-bootstrap'], {
    env: cleanEnv({ MAILVERDICT_EMBEDDED_WORKERS: 'false' }),
    stderr: 'ignore',
  });
  const apiUrl = api.url;
  const ceiling = await startCeiling();
  const ceilingUrl = ceiling.url;
  const auth = { authorization: `Bearer ${testKey}` };
  try {
    // Warm-up: JIT, the engine's lists, SQLite's page cache.
    await autocannon({ url: `${ceilingUrl}/ceiling`, connections: 10, duration: 3 });
    await autocannon({
      url: `${apiUrl}/v1/verify`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'anna@valid.example.com' }),
      connections: 10,
      duration: 3,
    });

    const loadBefore = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    const verify = await load('POST /v1/verify (test key)', api.child, {
      url: `${apiUrl}/v1/verify`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'anna@valid.example.com' }),
    });
    const usage = await load('GET /v1/account/usage', api.child, {
      url: `${apiUrl}/v1/account/usage`,
      headers: auth,
    });
    const bare = await load('ceiling: bare Fastify GET, constant JSON', ceiling.child, {
      url: `${ceilingUrl}/ceiling`,
    });
    const barePost = await load('(not the ceiling) bare Fastify POST, verify body validated', ceiling.child, {
      url: `${ceilingUrl}/ceiling`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'anna@valid.example.com' }),
    });

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const lines = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node.js ${process.version};`,
      `command: \`npm run bench:api -- --duration ${DURATION} --connections ${CONNECTIONS}\` (autocannon, ${CONNECTIONS} connections, ${DURATION} s per run).`,
      '',
      `load average before the runs: ${loadBefore}, after: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      '',
      '| Run | Requests/s | p50 ms | p99 ms | Requests | non-2xx | errors | server CPU µs/request |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...[verify, usage, bare, barePost].map(
        (f) =>
          `| ${f.name} | ${f.rps} | ${f.p50} | ${f.p99} | ${f.requests} | ${f.non2xx} | ${f.errors} | ${f.cpuPerRequest ?? 'n/a'} |`,
      ),
      '',
      `POST /v1/verify with a test key reaches ${Math.round((100 * verify.rps) / bare.rps)}% of the ceiling (target: 60% or more); ` +
        `GET /v1/account/usage ${Math.round((100 * usage.rps) / bare.rps)}%; ` +
        `the bare POST with a validated body ${Math.round((100 * barePost.rps) / bare.rps)}%.`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stop(api.child);
    await stop(ceiling.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
