/**
 * bench:scale part e: how soon a worker hears of new work. A "worker" process's store (its own
 * Kysely instance and LISTEN connection) subscribes to the backend's wake-up; another instance,
 * as an API process would, commits jobs one at a time; each sample is the time from the start
 * of that INSERT to the wake-up (the notification often arrives before the submitter has its
 * own answer, so this includes the insert's round trip: an upper bound). The worker claims right after it (one statement, part a), so
 * this is the delay a new job waits beyond its claim. The target is 100 ms; polling alone waits
 * up to the poll interval (500 ms by default). SQLite is measured in one process (an embedded
 * worker hears its own process's submissions; other processes poll).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { storeBackend } from '../src/store/backend.js';
import { openDatabase, type StoreSettings } from '../src/store/db.js';
import { insertAccount } from '../src/store/account.store.js';
import { insertJob } from '../src/store/job.store.js';
import { migrateToLatest } from '../src/store/migrate.js';
import type { Database } from '../src/store/schema.js';
import { createBenchSchema } from './kit/scale.js';

export const WAKEUP_DEFAULTS = { samples: 200 };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(
  worker: Kysely<Database>,
  submitter: Kysely<Database>,
  samples: number,
): Promise<number[]> {
  const now = new Date().toISOString();
  await insertAccount(submitter, {
    id: 'acct_wakeup',
    email: 'wakeup@example.com',
    plan: 'free',
    quota_limit: null,
    rate_limit: null,
    created_at: now,
    updated_at: now,
  });
  let heard: (() => void) | null = null;
  const unsubscribe = storeBackend(worker).onWork(() => heard?.());
  // The listener connects lazily: ask for the change token once and give it a moment.
  storeBackend(worker).changes.changeToken();
  await new Promise((r) => setTimeout(r, 500));
  const delays: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const wake = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no wake-up within 5 s')), 5_000);
        heard = () => {
          clearTimeout(timer);
          resolve(performance.now());
        };
      });
      const started = performance.now();
      await insertJob(submitter, {
        id: `job_wakeup_${i}`,
        account_id: 'acct_wakeup',
        mode: 'test',
        status: 'queued',
        total: 1,
        chunk_size: 1,
        chunk_count: 1,
        quota_period_start: null,
        webhook_url: null,
        notify_email: 0,
        created_at: new Date().toISOString(),
        results_expire_at: new Date(Date.now() + 3_600_000).toISOString(),
      });
      delays.push((await wake) - started);
      heard = null;
    }
  } finally {
    unsubscribe();
  }
  return delays.sort((a, b) => a - b);
}

function row(name: string, delays: number[]): string {
  const f = (n: number) => n.toFixed(1);
  return `| ${name} | ${delays.length} | ${f(percentile(delays, 50))} | ${f(percentile(delays, 99))} | ${f(delays.at(-1)!)} |`;
}

export async function runWakeup(options = WAKEUP_DEFAULTS): Promise<string> {
  const lines = [
    `A job committed by one store instance, the wake-up heard by another (PostgreSQL: NOTIFY at commit, LISTEN in the worker; SQLite: the same process). ${options.samples} jobs one after another; from the start of the INSERT to the wake-up.`,
    '',
    '| backend | samples | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
  ];
  const schema = await createBenchSchema('wakeup');
  const pgSettings: StoreSettings = { dataDir: '/nonexistent', databaseUrl: schema.url, databasePoolSize: 2 };
  const worker = openDatabase(pgSettings);
  const submitter = openDatabase(pgSettings);
  try {
    await migrateToLatest(worker);
    await migrateToLatest(submitter);
    lines.push(row('PostgreSQL, another process', await measure(worker, submitter, options.samples)));
  } finally {
    await worker.destroy();
    await submitter.destroy();
    await schema.drop();
  }
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-wakeup-'));
  const sqlite = openDatabase({ dataDir: dir });
  try {
    await migrateToLatest(sqlite);
    lines.push(row('SQLite, same process', await measure(sqlite, sqlite, options.samples)));
  } finally {
    await sqlite.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  lines.push('', 'Target: a worker starts on a new job within 100 ms of its submission.');
  return lines.join('\n');
}
