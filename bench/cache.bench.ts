/**
 * `npm run bench:cache`: latency of POST /v1/verify for a live key, one address asked again and
 * again (answered from the result cache) against the same address with `fresh: true` (a real
 * probe each time). The server is the real `mailverdict serve` in a child process (temp data dir,
 * default settings, embedded workers off); the mail host is a loopback MTA and DNS the in-process
 * test server, both in this process. Requests go one at a time on one keep-alive connection, the
 * two kinds interleaved in rounds so that a change in the machine's load hits both alike.
 *
 * The loopback MTA (smtp-server, as in the tests) holds its banner 100 ms to catch clients that
 * talk too early, then answers at once: the uncached figure is that pause plus the round trips on
 * loopback. A real mail host adds network round trips and often pauses of its own (a greeting
 * delay against early talkers, a tarpit after refusals).
 *
 *   --requests 2000     cached requests (the first, which fills the cache, not counted)
 *   --fresh 300         requests with fresh: true
 *   --mta-delay-ms 0    delay of the MTA before its banner and its MAIL and RCPT replies
 *   --redis-url <url>   run the server with --redis-url (the cache then lives in Redis)
 *   --max-seconds 120   stop measuring after this long, whatever the counts
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { systemClock } from '../src/clock.js';
import { closeRedis, openRedis } from '../src/redis/connection.js';
import { createAccount } from '../src/services/accounts/accounts.service.js';
import { createKey } from '../src/services/keys/keys.service.js';
import { openDatabase } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { cleanEnv, spawnServe } from '../test/kit/cli.js';
import { startDnsServer } from '../test/kit/dns-server.js';
import { startSmtpServers } from '../test/kit/smtp-servers.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    fresh: { type: 'string', default: '300' },
    'mta-delay-ms': { type: 'string', default: '0' },
    'redis-url': { type: 'string' },
    'max-seconds': { type: 'string', default: '120' },
  },
});
const CACHED = Number(values.requests);
const FRESH = Number(values.fresh);
const MTA_DELAY_MS = Number(values['mta-delay-ms']);
const REDIS_URL = values['redis-url'];
const MAX_MS = Number(values['max-seconds']) * 1000;
const ROUNDS = 20;
const ADDRESS = 'anna@bench.test';
const REDIS_PREFIX = `mvbench:${process.pid}:`;

async function startServer(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const serve = await spawnServe(args, {
    env: cleanEnv({ MAILVERDICT_EMBEDDED_WORKERS: 'false' }),
    stderr: 'ignore',
  });
  return { child: serve.child, url: serve.url };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Figures {
  name: string;
  count: number;
  p50: number;
  p99: number;
  cachedAnswers: number;
}

function figures(name: string, latencies: number[], cachedAnswers: number): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    name,
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    cachedAnswers,
  };
}

/** The bench's entries would otherwise stay in Redis for their TTL. */
async function deleteKeys(url: string, prefix: string): Promise<void> {
  const client = await openRedis(url, { logger: pino({ level: 'silent' }) });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await closeRedis(client);
  }
}

async function main(): Promise<void> {
  const dns = await startDnsServer();
  const kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['anna'], delayMs: MTA_DELAY_MS } });
  dns.setDomain('bench.test', { mx: [{ exchange: 'mx1.bench.test', priority: 10 }] });
  dns.setDomain('mx1.bench.test', { a: [kit.hosts.mta!.ip] });

  const dataDir = mkdtempSync(join(os.tmpdir(), 'mailverdict-bench-cache-'));
  const db = openDatabase({ dataDir });
  await migrateToLatest(db);
  const account = await createAccount(db, systemClock, {
    email: 'bench@example.org',
    plan: 'enterprise',
    rateLimit: 10_000_000,
  });
  const { key } = await createKey(db, systemClock, { accountId: account.id, kind: 'live' });
  await db.destroy();

  const server = await startServer([
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--no-bootstrap',
    '--dns-server',
    dns.address,
    '--smtp-port',
    String(kit.port),
    '--allow-internal-targets',
    ...(REDIS_URL === undefined ? [] : ['--redis-url', REDIS_URL, '--redis-key-prefix', REDIS_PREFIX]),
  ]);
  const ask = async (fresh: boolean): Promise<{ ms: number; cached: boolean }> => {
    const started = performance.now();
    const res = await fetch(`${server.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADDRESS, fresh }),
    });
    const body = (await res.json()) as { status: string; cached: boolean };
    const ms = performance.now() - started;
    if (res.status !== 200 || body.status !== 'deliverable')
      throw new Error(`unexpected answer ${res.status}`);
    return { ms, cached: body.cached };
  };

  try {
    // Warm-up: JIT, the engine's lists and DNS cache, SQLite's pages; the first answer fills the cache.
    for (let i = 0; i < 20; i++) await ask(true);
    for (let i = 0; i < 200; i++) await ask(false);

    const loadBefore = os.loadavg().map((l) => l.toFixed(2));
    const cached: number[] = [];
    const fresh: number[] = [];
    let cachedHits = 0;
    let freshHits = 0;
    const deadline = performance.now() + MAX_MS;
    for (let round = 0; round < ROUNDS && performance.now() < deadline; round++) {
      for (let i = 0; i < CACHED / ROUNDS && performance.now() < deadline; i++) {
        const r = await ask(false);
        cached.push(r.ms);
        if (r.cached) cachedHits++;
      }
      for (let i = 0; i < FRESH / ROUNDS && performance.now() < deadline; i++) {
        const r = await ask(true);
        fresh.push(r.ms);
        if (r.cached) freshHits++;
      }
    }
    const loadAfter = os.loadavg().map((l) => l.toFixed(2));
    const rows = [
      figures('repeated address, answered from the cache', cached, cachedHits),
      figures('same address with fresh: true (probed each time)', fresh, freshHits),
    ];
    for (const row of rows) process.stderr.write(`${JSON.stringify(row)}\n`);

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const args = process.argv.slice(2).join(' ');
    const lines = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${cpu}, Node.js ${process.version}, ` +
        `cache in ${REDIS_URL === undefined ? 'memory' : 'Redis'}, MTA delay ${MTA_DELAY_MS} ms;`,
      `command: \`npm run bench:cache${args === '' ? '' : ` -- ${args}`}\` (one connection, requests one at a time).`,
      '',
      `load average (1, 5, 15 min) before: ${loadBefore.join(' ')}, after: ${loadAfter.join(' ')}`,
      '',
      '| Run | Requests | p50 ms | p99 ms | answered from the cache |',
      '|---|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.name} | ${r.count} | ${r.p50} | ${r.p99} | ${r.cachedAnswers} |`),
      '',
      `Cached p50 ${rows[0]!.p50} ms (target: under 5 ms); ${Math.round((10 * rows[1]!.p50) / rows[0]!.p50) / 10}× faster than the probe's p50 here.`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    server.child.kill('SIGTERM');
    await once(server.child, 'exit');
    rmSync(dataDir, { recursive: true, force: true });
    if (REDIS_URL !== undefined) await deleteKeys(REDIS_URL, REDIS_PREFIX);
    await kit.close();
    await dns.close();
  }
}

await main();
