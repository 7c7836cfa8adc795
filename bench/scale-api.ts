/**
 * `npm run bench:scale`, part b: one `serve` process on PostgreSQL + Redis against one on SQLite,
 * the method of bench/api.bench.ts (a real `serve` child, no embedded workers, an account whose
 * rate limit the load cannot reach, autocannon from this process, the server's CPU per request
 * from /proc): POST /v1/verify with a test key and GET /v1/account/usage, requests/s and CPU per
 * request, and their ratio PostgreSQL / SQLite (the target: within 70%).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { systemClock } from '../src/clock.js';
import { createAccount } from '../src/services/accounts/accounts.service.js';
import { createKey } from '../src/services/keys/keys.service.js';
import { openDatabase, type StoreSettings } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import {
  REDIS_URL,
  childEnv,
  cpuMicros,
  createBenchSchema,
  fmt,
  redisPrefix,
  startCli,
  stopChild,
  type CliProcess,
} from './kit/scale.js';

export interface ApiOptions {
  /** Seconds per autocannon run. */
  duration: number;
  connections: number;
}

export const API_DEFAULTS: ApiOptions = { duration: 10, connections: 50 };

interface Figures {
  rps: number;
  cpuPerRequest: number | null;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

async function load(server: CliProcess, options: autocannon.Options): Promise<Figures> {
  const before = cpuMicros(server.child.pid);
  const result = await autocannon(options);
  const after = cpuMicros(server.child.pid);
  return {
    rps: result.requests.average,
    cpuPerRequest: before === null || after === null ? null : (after - before) / result.requests.total,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function testKeyFor(settings: StoreSettings): Promise<string> {
  const db = openDatabase(settings);
  try {
    await migrateToLatest(db);
    const account = await createAccount(db, systemClock, {
      email: 'bench@example.org',
      plan: 'enterprise',
      rateLimit: 10_000_000,
    });
    return (await createKey(db, systemClock, { accountId: account.id, kind: 'test' })).key;
  } finally {
    await db.destroy();
  }
}

async function measure(
  label: string,
  args: string[],
  key: string,
  options: ApiOptions,
): Promise<{ verify: Figures; usage: Figures }> {
  const server = await startCli(['serve', '--port', '0', '--no-bootstrap', ...args], childEnv());
  const url = server.event.url as string;
  const auth = { authorization: `Bearer ${key}` };
  const verifyRequest = {
    url: `${url}/v1/verify`,
    method: 'POST' as const,
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'anna@valid.example.com' }),
    connections: options.connections,
  };
  try {
    // Warm-up: JIT, the engine's lists, caches and connection pools.
    await autocannon({ ...verifyRequest, connections: 10, duration: 3 });
    await autocannon({ url: `${url}/v1/account/usage`, headers: auth, connections: 10, duration: 2 });
    const verify = await load(server, { ...verifyRequest, duration: options.duration });
    const usage = await load(server, {
      url: `${url}/v1/account/usage`,
      headers: auth,
      connections: options.connections,
      duration: options.duration,
    });
    process.stderr.write(`  api ${label}: ${JSON.stringify({ verify, usage })}\n`);
    // autocannon resolves with requests still in flight: let the server answer them before SIGTERM.
    await sleep(1000);
    return { verify, usage };
  } finally {
    await stopChild(server.child);
  }
}

/** Runs part b and returns its Markdown table and notes. */
export async function runApi(options: ApiOptions = API_DEFAULTS): Promise<string> {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'mailverdict-bench-scale-api-'));
  const schema = await createBenchSchema('api');
  const redis = redisPrefix('api');
  try {
    const sqliteKey = await testKeyFor({ dataDir });
    const pgKey = await testKeyFor({ dataDir, databaseUrl: schema.url });
    const sqlite = await measure('sqlite', ['--data-dir', dataDir], sqliteKey, options);
    const postgres = await measure(
      'postgres+redis',
      [
        '--data-dir',
        dataDir,
        '--database-url',
        schema.url,
        '--redis-url',
        REDIS_URL,
        '--redis-key-prefix',
        redis.prefix,
      ],
      pgKey,
      options,
    );
    const row = (route: string, s: Figures, p: Figures): string =>
      `| ${route} | ${fmt(s.rps)} | ${fmt(p.rps)} | **${Math.round((100 * p.rps) / s.rps)}%** | ` +
      `${s.cpuPerRequest === null ? 'n/a' : fmt(s.cpuPerRequest)} | ${p.cpuPerRequest === null ? 'n/a' : fmt(p.cpuPerRequest)} | ` +
      `${fmt(s.p99)} / ${fmt(p.p99)} | ${s.non2xx + s.errors} / ${p.non2xx + p.errors} |`;
    return [
      `autocannon, ${options.connections} connections, ${options.duration} s per run after a warm-up; one \`serve\` ` +
        'process each (no embedded workers); server CPU from /proc (PostgreSQL and Redis spend CPU of their own, ' +
        'not counted here).',
      '',
      '| route | SQLite req/s | PostgreSQL + Redis req/s | PG / SQLite | SQLite CPU µs/req | PG CPU µs/req | p99 ms (SQLite / PG) | non-2xx + errors (SQLite / PG) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      row('POST /v1/verify (test key)', sqlite.verify, postgres.verify),
      row('GET /v1/account/usage', sqlite.usage, postgres.usage),
    ].join('\n');
  } finally {
    await schema.drop();
    await redis.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
