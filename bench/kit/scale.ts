/**
 * What the parts of `npm run bench:scale` share: the PostgreSQL and Redis they run on (each run
 * in a schema and under a key prefix of its own, removed at the end), the `mailverdict` child
 * processes they start, and the figures they read from /proc.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { cleanEnv, spawnMailverdict, stopProcess, type FirstLine } from '../../test/kit/cli.js';
import { waitFor as waitForKit } from '../../test/kit/wait-for.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DATABASE_URL =
  process.env.MAILVERDICT_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.MAILVERDICT_BENCH_REDIS_URL || 'redis://127.0.0.1:6379';

/** The identifier of this run: its schemas and Redis prefixes start with it. */
export const RUN_ID = `mv_bench_scale_${randomBytes(4).toString('hex')}`;

export interface BenchSchema {
  /** The URL that selects the schema (search_path in `options`). */
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty schema on the bench PostgreSQL server. */
export async function createBenchSchema(part: string): Promise<BenchSchema> {
  const schema = `${RUN_ID}_${part}`;
  await admin((c) => c.query(`create schema ${schema}`));
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`drop schema if exists ${schema} cascade`)).then(() => undefined),
  };
}

/** A Redis key prefix of this run; `drop` deletes its keys (a bounded SCAN). */
export function redisPrefix(part: string): { prefix: string; drop(): Promise<void> } {
  const prefix = `${RUN_ID}:${part}:`;
  return {
    prefix,
    async drop() {
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        let cursor = '0';
        for (let round = 0; round < 10_000; round++) {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
          if (cursor === '0') break;
        }
      } finally {
        redis.disconnect();
      }
    },
  };
}

/** The environment of a child process: ours without any MAILVERDICT_ setting, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', ...extra });
}

export interface CliProcess {
  child: ChildProcess;
  /** The first JSON line the command printed (`--json`). */
  event: FirstLine;
}

/**
 * Starts `mailverdict <args> --json` through tsx and waits (at most `timeoutMs`) for its first
 * JSON line: `listening` for serve, `worker_started` for worker.
 */
export async function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<CliProcess> {
  const started = await spawnMailverdict(args, { env, stderr: 'inherit', withinMs: timeoutMs });
  return { child: started.child, event: started.first };
}

/** SIGTERM, then SIGKILL if the process has not exited after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  await stopProcess(child, { withinMs: graceMs });
}

/** CPU time (user + system) a process has used, in microseconds; null where /proc is missing. */
export function cpuMicros(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    // Linux reports 100 clock ticks per second to user space.
    return Number.isFinite(ticks) ? ticks * 10_000 : null;
  } catch {
    return null;
  }
}

/** Peak and current resident set size of a process, in MiB. */
export function memoryOf(pid: number): { peakMiB: number; rssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { peakMiB: Math.round(kib('VmHWM') / 1024), rssMiB: Math.round(kib('VmRSS') / 1024) };
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

/** The `p` quantile (0-1) of `values`, sorted in place. */
export function quantile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor(p * values.length))]!;
}

/** Polls `check` every `everyMs` until it returns a value, failing after `timeoutMs`. */
export function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 50,
): Promise<T> {
  return waitForKit(what, check, timeoutMs, everyMs);
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
