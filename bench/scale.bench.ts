/**
 * `npm run bench:scale`: scale-out on PostgreSQL and Redis (issue 8), in four parts run in this
 * order unless `--only` picks some:
 *   a  claims    chunk claims/s and p99 latency, 1-8 competing workers, SKIP LOCKED vs the old
 *                candidate-then-conditional-update claim (bench/scale-claims.ts)
 *   b  api       POST /v1/verify and GET /v1/account/usage, one serve on PostgreSQL + Redis vs
 *                one on SQLite (bench/scale-api.ts)
 *   c  batch     500,000-address submission and download on PostgreSQL (bench/scale-batch.ts)
 *   d  workers   a live job with 1, 2 and 4 worker processes against fake MTAs
 *                (bench/scale-workers.ts)
 *   e  wake-up   from a job's commit to a worker hearing of it (bench/scale-wakeup.ts)
 *
 * Needs PostgreSQL and Redis on loopback: MAILVERDICT_BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test) and MAILVERDICT_BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379). Every part works in a schema and under a Redis key prefix of its own,
 * removed when it ends. Prints Markdown.
 *
 *   npm run bench:scale -- --only a,b --api-duration 10
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { API_DEFAULTS, runApi } from './scale-api.js';
import { runBatch } from './scale-batch.js';
import { CLAIM_DEFAULTS, runClaims } from './scale-claims.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, loadAverage } from './kit/scale.js';
import { WAKEUP_DEFAULTS, runWakeup } from './scale-wakeup.js';
import { WORKER_DEFAULTS, runWorkers } from './scale-workers.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'a,b,c,d,e' },
    'claim-seconds': { type: 'string', default: String(CLAIM_DEFAULTS.secondsPerRun) },
    'api-duration': { type: 'string', default: String(API_DEFAULTS.duration) },
    addresses: { type: 'string', default: String(WORKER_DEFAULTS.addresses) },
  },
});

function positive(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

const PARTS = {
  a: {
    title: 'a. Claims on PostgreSQL',
    run: () =>
      runClaims({ ...CLAIM_DEFAULTS, secondsPerRun: positive('claim-seconds', values['claim-seconds']) }),
  },
  b: {
    title: 'b. One API process: PostgreSQL + Redis vs SQLite',
    run: () => runApi({ ...API_DEFAULTS, duration: positive('api-duration', values['api-duration']) }),
  },
  c: { title: 'c. 500,000-address submission and download on PostgreSQL', run: runBatch },
  d: {
    title: 'd. A live job with 1, 2 and 4 worker processes',
    run: () => runWorkers({ ...WORKER_DEFAULTS, addresses: positive('addresses', values.addresses) }),
  },
  e: { title: 'e. Wake-up of a worker on a new job', run: () => runWakeup(WAKEUP_DEFAULTS) },
} as const;
type Part = keyof typeof PARTS;

const only = (values.only ?? '').split(',').map((p) => p.trim());
for (const p of only) if (!(p in PARTS)) throw new Error(`--only takes a,b,c,d,e; got "${p}"`);

// A bench must end: give up loudly rather than hang if something never settles.
const watchdog = setTimeout(() => {
  console.error('bench:scale: not done after 30 minutes, giving up');
  process.exit(1);
}, 30 * 60_000);
watchdog.unref();

const cpus = os.cpus();
console.log(`# bench:scale (${RUN_ID}), ${new Date().toISOString()}`);
console.log(
  `machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `Node.js ${process.version}; PostgreSQL ${new URL(DATABASE_URL).host}, Redis ${new URL(REDIS_URL).host}`,
);
console.log(`load average at start: ${loadAverage()}`);
for (const part of only as Part[]) {
  const started = performance.now();
  const loadBefore = loadAverage();
  const text = await PARTS[part].run();
  console.log(`\n## ${PARTS[part].title}\n`);
  console.log(
    `(${((performance.now() - started) / 1000).toFixed(0)} s; load average before ${loadBefore}, after ${loadAverage()})\n`,
  );
  console.log(text);
}
