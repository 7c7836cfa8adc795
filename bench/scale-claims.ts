/**
 * `npm run bench:scale`, part a: claiming chunks on PostgreSQL with 1, 2, 4 and 8 competing
 * workers, each its own Kysely instance and pool, claiming in a loop and marking each chunk done.
 * Two ways of claiming on the same data (one job of `chunks` chunks, reset before every run):
 *   - skip-locked: the PostgreSQL backend's claim (store/dialect/postgres-backend.ts), one UPDATE with
 *     FOR UPDATE SKIP LOCKED;
 *   - candidate-update: what PostgreSQL did before and SQLite still does (store/dialect/sqlite-backend.ts):
 *     findClaimableChunks (8 candidates) then a conditional UPDATE per candidate until one
 *     sticks; a candidate another worker took first is a failed claim attempt.
 * A run ends when `claimsPerRun` chunks were claimed, no chunk is left, or after `secondsPerRun`.
 * Two queue depths: 20,000 chunks (20 million addresses at the default 1,000 per chunk) and 500
 * (one 500,000-address job), since each claim sorts every pending chunk.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { systemClock } from '../src/clock.js';
import { createAccount } from '../src/services/accounts/accounts.service.js';
import { storeBackend } from '../src/store/backend.js';
import { claimChunk, completeChunk, findClaimableChunks, insertChunks } from '../src/store/chunk.store.js';
import { openDatabase } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import type { Database } from '../src/store/schema.js';
import type { ChunkRow } from '../src/store/schema/jobs.schema.js';
import { createBenchSchema, fmt, quantile } from './kit/scale.js';

export interface ClaimOptions {
  /** Queue depths measured, each a job of that many pending chunks. */
  chunks: readonly number[];
  claimsPerRun: number;
  secondsPerRun: number;
  workers: readonly number[];
}

export const CLAIM_DEFAULTS: ClaimOptions = {
  chunks: [20_000, 500],
  claimsPerRun: 20_000,
  secondsPerRun: 8,
  workers: [1, 2, 4, 8],
};

type Approach = 'skip-locked' | 'candidate-update';

interface Tally {
  claimed: number;
  latenciesMs: number[];
  /** Candidate-update only: conditional UPDATEs that found the candidate taken. */
  lostCandidates: number;
  /** Candidate-update only: rounds where all 8 candidates were taken (the worker asks again). */
  emptyRounds: number;
}

const LEASE_MS = 30_000;
const NO_CHUNKS_IN_FLIGHT = { has: () => false, keys: () => [] };

async function claimOnce(
  db: Kysely<Database>,
  approach: Approach,
  owner: string,
  tally: Tally,
): Promise<ChunkRow | undefined> {
  const now = new Date();
  const claim = {
    owner,
    now: now.toISOString(),
    expiresAt: new Date(now.getTime() + LEASE_MS).toISOString(),
    inFlight: NO_CHUNKS_IN_FLIGHT,
  };
  if (approach === 'skip-locked') return storeBackend(db).claimChunk(db, claim);
  // Bounded: each round either claims, finds nothing, or lost all its candidates to others.
  for (let round = 0; round < 1_000; round++) {
    const candidates = await findClaimableChunks(db, claim.now, 8);
    if (candidates.length === 0) return undefined;
    for (const ref of candidates) {
      const chunk = await claimChunk(db, ref, owner, claim.now, claim.expiresAt);
      if (chunk) return chunk;
      tally.lostCandidates += 1;
    }
    tally.emptyRounds += 1;
  }
  return undefined;
}

async function workerLoop(
  db: Kysely<Database>,
  approach: Approach,
  owner: string,
  tally: Tally,
  shared: { claimed: number; limit: number; deadline: number },
): Promise<void> {
  while (shared.claimed < shared.limit && performance.now() < shared.deadline) {
    const t0 = performance.now();
    const chunk = await claimOnce(db, approach, owner, tally);
    tally.latenciesMs.push(performance.now() - t0);
    if (!chunk) return;
    shared.claimed += 1;
    tally.claimed += 1;
    const done = await completeChunk(db, chunk, owner, { results: '[]', valid: 0, invalid: 0 });
    if (!done) throw new Error(`chunk ${chunk.job_id}/${chunk.seq} claimed twice`);
  }
}

async function seedJob(db: Kysely<Database>, chunks: number): Promise<string> {
  const account = await createAccount(db, systemClock, { email: 'claims@bench.test', plan: 'enterprise' });
  const jobId = `job_bench${randomBytes(6).toString('hex')}`;
  const now = new Date().toISOString();
  await db
    .insertInto('jobs')
    .values({
      id: jobId,
      account_id: account.id,
      mode: 'test',
      status: 'processing',
      total: chunks * 10,
      chunk_size: 10,
      chunk_count: chunks,
      quota_period_start: null,
      webhook_url: null,
      notify_email: 0,
      error: null,
      created_at: now,
      started_at: now,
      completed_at: null,
      failed_at: null,
      results_expire_at: new Date(Date.now() + 86_400_000).toISOString(),
      results_deleted_at: null,
    })
    .execute();
  const emails = JSON.stringify(Array.from({ length: 10 }, (_, i) => `user${i}@bench.test`));
  await insertChunks(
    db,
    Array.from({ length: chunks }, (_, seq) => ({
      job_id: jobId,
      seq,
      start_index: seq * 10,
      size: 10,
      emails,
      repeats: null,
      results: null,
      state: 'pending' as const,
      lease_owner: null,
      lease_expires_at: null,
    })),
  );
  return jobId;
}

async function resetChunks(db: Kysely<Database>): Promise<void> {
  await sql`update job_chunks set state = 'pending', results = null, lease_owner = null,
    lease_expires_at = null, attempts = 0`.execute(db);
  await sql`vacuum analyze job_chunks`.execute(db);
}

interface RunFigures {
  approach: Approach;
  workers: number;
  claimed: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  lostCandidates: number;
  emptyRounds: number;
}

/** Runs part a and returns its Markdown tables and notes. */
export async function runClaims(options: ClaimOptions = CLAIM_DEFAULTS): Promise<string> {
  const parts: string[] = [];
  for (const chunks of options.chunks) parts.push(await runClaimsOn(chunks, options));
  return parts.join('\n\n');
}

async function runClaimsOn(chunks: number, options: ClaimOptions): Promise<string> {
  const schema = await createBenchSchema('claims');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'mailverdict-bench-scale-'));
  const settings = { dataDir, databaseUrl: schema.url, databasePoolSize: 2 };
  const admin = openDatabase(settings);
  const instances: Kysely<Database>[] = [];
  const rows: RunFigures[] = [];
  try {
    await migrateToLatest(admin);
    await seedJob(admin, chunks);
    const most = Math.max(...options.workers);
    for (let i = 0; i < most; i++) instances.push(openDatabase(settings));
    // Open every pool's connection before timing anything.
    await Promise.all(instances.map((db) => sql`select 1`.execute(db)));
    for (const workers of options.workers) {
      for (const approach of ['skip-locked', 'candidate-update'] as const) {
        await resetChunks(admin);
        const shared = {
          claimed: 0,
          limit: options.claimsPerRun,
          deadline: performance.now() + options.secondsPerRun * 1000,
        };
        const tallies = Array.from({ length: workers }, () => ({
          claimed: 0,
          latenciesMs: [] as number[],
          lostCandidates: 0,
          emptyRounds: 0,
        }));
        const t0 = performance.now();
        await Promise.all(
          tallies.map((tally, w) => workerLoop(instances[w]!, approach, `bench-w${w}`, tally, shared)),
        );
        const seconds = (performance.now() - t0) / 1000;
        const latencies = tallies.flatMap((t) => t.latenciesMs);
        const figures: RunFigures = {
          approach,
          workers,
          claimed: shared.claimed,
          seconds,
          perSecond: shared.claimed / seconds,
          p50: quantile(latencies, 0.5),
          p99: quantile(latencies, 0.99),
          lostCandidates: tallies.reduce((s, t) => s + t.lostCandidates, 0),
          emptyRounds: tallies.reduce((s, t) => s + t.emptyRounds, 0),
        };
        const counted = await sql<{
          n: number;
        }>`select count(*) as n from job_chunks where state = 'done'`.execute(admin);
        if (counted.rows[0]?.n !== shared.claimed)
          throw new Error(`${counted.rows[0]?.n} chunks done, ${shared.claimed} claimed`);
        process.stderr.write(`  claims (${chunks} chunks): ${JSON.stringify(figures)}\n`);
        rows.push(figures);
      }
    }
  } finally {
    await Promise.all(instances.map((db) => db.destroy()));
    await admin.destroy();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const byKey = new Map(rows.map((r) => [`${r.approach}/${r.workers}`, r]));
  const lines = [
    `One job of ${fmt(chunks)} chunks; each run stops at ${fmt(options.claimsPerRun)} claims or ` +
      `${options.secondsPerRun} s; each worker claims, then marks the chunk done (a second statement, not timed).`,
    '',
    '| workers | skip-locked chunks/s | p50 / p99 claim (ms) | candidate-update chunks/s | p50 / p99 claim (ms) | lost candidates (empty rounds) | ratio |',
    '|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const workers of options.workers) {
    const a = byKey.get(`skip-locked/${workers}`)!;
    const b = byKey.get(`candidate-update/${workers}`)!;
    lines.push(
      `| ${workers} | ${fmt(a.perSecond)} | ${fmt(a.p50, 2)} / ${fmt(a.p99, 2)} | ${fmt(b.perSecond)} | ` +
        `${fmt(b.p50, 2)} / ${fmt(b.p99, 2)} | ${fmt(b.lostCandidates)} (${fmt(b.emptyRounds)}) | ` +
        `${(a.perSecond / b.perSecond).toFixed(2)}× |`,
    );
  }
  lines.push(
    '',
    `Claims per run (skip-locked / candidate-update): ${options.workers
      .map(
        (w) =>
          `${w}: ${byKey.get(`skip-locked/${w}`)!.claimed} / ${byKey.get(`candidate-update/${w}`)!.claimed}`,
      )
      .join('; ')}.`,
  );
  return lines.join('\n');
}
