/**
 * `npm run bench:scale`, part c: submission of 500,000 addresses and the download of its results
 * on PostgreSQL (+ Redis). bench/batch-api.bench.ts measures exactly that on SQLite and passes
 * its environment on to the `serve` and `worker` processes it starts, so it runs here unchanged
 * with MAILVERDICT_DATABASE_URL naming a fresh schema: same sizes, same fresh process per
 * measurement, same peak RSS (VmHWM), and its tables are printed as they come.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { REDIS_URL, ROOT, childEnv, createBenchSchema, redisPrefix } from './kit/scale.js';

/** The longest the SQLite bench took here was under a minute; give PostgreSQL ten. */
const TIMEOUT_MS = 10 * 60_000;

/** Runs part c and returns batch-api.bench.ts's tables (its Markdown lines). */
export async function runBatch(): Promise<string> {
  const schema = await createBenchSchema('batch');
  const redis = redisPrefix('batch');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/batch-api.bench.ts'], {
      cwd: ROOT,
      env: childEnv({
        MAILVERDICT_DATABASE_URL: schema.url,
        MAILVERDICT_REDIS_URL: REDIS_URL,
        MAILVERDICT_REDIS_KEY_PREFIX: redis.prefix,
      }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), TIMEOUT_MS);
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      process.stderr.write(`  batch: ${line}\n`);
      // Its header (machine, a temp data dir unused with PostgreSQL) is ours already; its
      // headings go one level down, under this part's.
      if (/^(# batch API benchmark|machine:|data dir:)/.test(line)) return;
      lines.push(line.replace(/^## /, '### '));
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    if (code !== 0) throw new Error(`bench/batch-api.bench.ts exited with ${code}`);
    // Proof that the processes it started used PostgreSQL, not a SQLite file in its data dir.
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    const stored = await client
      .query<{ n: string }>('select count(*) as n from jobs')
      .finally(() => client.end());
    lines.push('', `(jobs stored in this run's PostgreSQL schema: ${stored.rows[0]?.n})`);
    return lines.join('\n').trim();
  } finally {
    await schema.drop();
    await redis.drop();
  }
}
