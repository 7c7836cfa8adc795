/**
 * Real `mailverdict serve` and `worker` processes on one PostgreSQL schema and one Redis key
 * prefix, as a scaled-out deployment runs them (docs/scaling.md), for the multi-process tests of
 * this folder. Each test file calls `scaleServices()` once: without MAILVERDICT_TEST_DATABASE_URL
 * or MAILVERDICT_TEST_REDIS_URL it prints one line and the file is skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { systemClock } from '../../src/clock.js';
import { createAccount, type NewAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { openDatabase } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import {
  cleanEnv,
  runCli,
  spawnMailverdict,
  stopProcess,
  type CliResult,
  type FirstLine,
} from '../kit/cli.js';
import { createTestSchema, TEST_DATABASE_URL, TEST_SECRET_KEY, TEST_SECRETS } from '../kit/store-harness.js';
import { testRedis, TEST_REDIS_URL, type TestRedis } from '../redis/redis-kit.js';

/** How long a child gets to print its first line: tsx compiles the sources, on two shared cores. */
const START_WITHIN_MS = 60_000;

/** True when `suite` must be skipped (PostgreSQL or Redis not named), after printing one line why. */
export function skipWithoutServices(suite: string): boolean {
  const missing = [
    TEST_DATABASE_URL === null ? 'MAILVERDICT_TEST_DATABASE_URL' : null,
    TEST_REDIS_URL === '' ? 'MAILVERDICT_TEST_REDIS_URL' : null,
  ].filter((name) => name !== null);
  if (missing.length === 0) return false;
  console.log(`${suite}: skipped, ${missing.join(' and ')} not set (.ci/run sets both)`);
  return true;
}

export interface Child {
  child: ChildProcess;
  /** The first line it printed with --json (`listening` or `worker_started`). */
  ready: FirstLine;
  exited: Promise<number | null>;
  stderr(): string;
}

export interface ScaleServices {
  /** The PostgreSQL URL selecting this file's own schema. */
  databaseUrl: string;
  redis: TestRedis;
  /** The test's own connection to the store, migrated (setup and checks). */
  db: Kysely<Database>;
  /** `serve --no-embedded-workers --port 0` on the shared store and Redis. */
  startApi(settings?: Record<string, string>): Promise<Child & { url: string }>;
  /** `worker` on the shared store and Redis. */
  startWorker(settings?: Record<string, string>): Promise<Child & { worker: string }>;
  /** The real CLI (`keys revoke …`) on the shared store. */
  cli(args: string[]): Promise<CliResult>;
  /** An account with a live key (and its id), created in the store as `accounts create` would. */
  account(input?: Partial<NewAccount>): Promise<{ id: string; liveKey: string; liveKeyId: string }>;
  /** SIGKILLs every child still running, closes the store and Redis connections. */
  close(): Promise<void>;
}

export async function scaleServices(): Promise<ScaleServices> {
  const schema = await createTestSchema();
  const redis = testRedis();
  await redis.connect(); // deletes the prefix's keys at close
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-scale-'));
  const db = openDatabase({ dataDir, databaseUrl: schema.url, databasePoolSize: 4, secrets: TEST_SECRETS });
  // Migrated once here, so that the children find the schema current.
  await migrateToLatest(db);
  const children = new Set<ChildProcess>();
  const shared = {
    MAILVERDICT_DATA_DIR: dataDir,
    MAILVERDICT_DATABASE_URL: schema.url,
    MAILVERDICT_DATABASE_POOL_SIZE: '5',
    MAILVERDICT_SECRET_KEY: TEST_SECRET_KEY,
    MAILVERDICT_REDIS_URL: TEST_REDIS_URL,
    MAILVERDICT_REDIS_KEY_PREFIX: redis.prefix,
    MAILVERDICT_BOOTSTRAP: 'false',
    MAILVERDICT_LOG_LEVEL: 'warn',
  };

  const start = async (command: 'serve' | 'worker', settings: Record<string, string>): Promise<Child> => {
    const args = command === 'serve' ? ['serve', '--port', '0'] : ['worker'];
    const started = await spawnMailverdict(args, {
      env: cleanEnv({ ...shared, ...settings }),
      withinMs: START_WITHIN_MS,
    });
    children.add(started.child);
    void started.exited.then(() => children.delete(started.child));
    return { child: started.child, ready: started.first, exited: started.exited, stderr: started.stderr };
  };

  return {
    databaseUrl: schema.url,
    redis,
    db,
    async startApi(settings = {}) {
      const api = await start('serve', { MAILVERDICT_EMBEDDED_WORKERS: 'false', ...settings });
      return { ...api, url: api.ready.url! };
    },
    async startWorker(settings = {}) {
      const worker = await start('worker', settings);
      return { ...worker, worker: worker.ready.worker! };
    },
    cli: (args) => runCli([...args, '--database-url', schema.url], cleanEnv(shared)),
    async account(input = {}) {
      const account = await createAccount(db, systemClock, {
        email: 'scale@example.com',
        rateLimit: 1000,
        ...input,
      });
      const live = await createKey(db, systemClock, { accountId: account.id, kind: 'live' });
      return { id: account.id, liveKey: live.key, liveKeyId: live.record.id };
    },
    async close() {
      const running = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
      const ended = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
      for (const child of running) child.kill('SIGKILL');
      await Promise.all(ended);
      await db.destroy();
      await redis.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { waitFor } from '../kit/wait-for.js';

/** Stops a child with SIGTERM, bounded; SIGKILL when it does not exit in time. */
export async function stopChild(c: Child, withinMs = 15_000): Promise<number | null> {
  const { code, late } = await stopProcess(c.child, { withinMs });
  if (late) throw new Error(`still running ${withinMs} ms after SIGTERM: ${c.stderr()}`);
  return code;
}

/** A request with the key (JSON body when given). */
export function api(url: string, key: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') {
  return fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const CREATE_KEYS = fileURLToPath(new URL('./create-keys-child.ts', import.meta.url));

export interface KeyCreations {
  created: number;
  refused: number;
  failed: string[];
}

/**
 * `processes` runs of test/scale/create-keys-child.ts, each creating `perProcess` keys for
 * `accountId` at once; all are released together once every one has connected to the store.
 */
export async function createKeysInChildren(
  databaseUrl: string,
  accountId: string,
  processes: number,
  perProcess: number,
): Promise<KeyCreations[]> {
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, ['--import', 'tsx', CREATE_KEYS], {
      env: cleanEnv({
        SCALE_DATABASE_URL: databaseUrl,
        SCALE_ACCOUNT: accountId,
        SCALE_COUNT: String(perProcess),
      }),
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const timer = setTimeout(() => children.forEach((c) => c.kill('SIGKILL')), 30_000);
  try {
    const runs = children.map((child) => {
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const result = new Promise<KeyCreations>((resolve, reject) =>
        child.on('close', (code) =>
          code === 0
            ? resolve(JSON.parse(out.slice('ready\n'.length)) as KeyCreations)
            : reject(new Error(`create-keys-child exited with ${code}: ${err}`)),
        ),
      );
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.startsWith('ready\n')) resolve();
        });
        result.catch(reject);
      });
      return { ready, result };
    });
    await Promise.all(runs.map((r) => r.ready));
    for (const child of children) child.stdin.end('go\n');
    return await Promise.all(runs.map((r) => r.result));
  } finally {
    clearTimeout(timer);
  }
}
