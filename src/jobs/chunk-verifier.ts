/**
 * Turns a chunk's addresses into result rows: test jobs through the fixed test-mode results
 * (no network), live jobs through the batch engine (per-domain grouping, connection reuse).
 *
 * An address that occurs in several chunks of a live job (submission marks them: `repeats`) is
 * probed once per worker process: the first chunk to meet it probes it, the others wait for and
 * copy that result. The engine already deduplicates within one chunk.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchEngine } from '../engine/batch/types.js';
import type { VerificationResult, Verifier } from '../engine/types.js';
import { testModeResult } from '../services/test-mode.js';
import { addressKey, type ResultRow } from '../store/chunk-codec.js';
import type { JobMode } from '../store/schema/jobs.schema.js';

export interface ChunkJob {
  id: string;
  mode: JobMode;
}

/** `repeats`: positions in `emails` whose address occurs elsewhere in the job too. */
export type ChunkVerifier = (
  job: ChunkJob,
  emails: readonly string[],
  signal: AbortSignal,
  repeats?: readonly number[],
) => Promise<ResultRow[]>;

export interface ChunkVerifierDeps {
  verifier: Verifier;
  /** Null: this process cannot run live jobs (they fail loudly rather than silently pass). */
  batchEngine: BatchEngine | null;
  testDomain: string;
  testModeChunkDelayMs: number;
}

/** Jobs whose repeated-address results are kept; a worker runs at most a few jobs at once. */
const JOBS_REMEMBERED = 8;

function toRow(r: VerificationResult): ResultRow {
  return { status: r.status, score: r.score, reason: r.reason, valid: r.valid };
}

export function createChunkVerifier(deps: ChunkVerifierDeps): ChunkVerifier {
  const shared = new Map<string, Map<string, Promise<ResultRow>>>();

  function sharedOf(jobId: string): Map<string, Promise<ResultRow>> {
    let map = shared.get(jobId);
    if (!map) {
      map = new Map();
      shared.set(jobId, map);
      // Map keeps insertion order: the first key is the job met longest ago.
      if (shared.size > JOBS_REMEMBERED) shared.delete(shared.keys().next().value!);
    }
    return map;
  }

  async function verifyLive(
    engine: BatchEngine,
    job: ChunkJob,
    emails: readonly string[],
    signal: AbortSignal,
    repeats: readonly number[],
  ): Promise<ResultRow[]> {
    const rows = new Array<ResultRow | undefined>(emails.length);
    const known = sharedOf(job.id);
    const waiting: [number, Promise<ResultRow>][] = [];
    const owned = new Map<string, { resolve(r: ResultRow): void; reject(e: unknown): void; index: number }>();
    const repeated = new Set(repeats);
    const toProbe: number[] = [];
    for (let i = 0; i < emails.length; i++) {
      if (!repeated.has(i)) {
        toProbe.push(i);
        continue;
      }
      const key = addressKey(emails[i]!);
      const pending = known.get(key);
      if (pending) {
        waiting.push([i, pending]);
        continue;
      }
      const promise = new Promise<ResultRow>((resolve, reject) =>
        owned.set(key, { resolve, reject, index: i }),
      );
      // Nobody may be waiting when it fails; that is not an unhandled rejection.
      promise.catch(() => {});
      known.set(key, promise);
      waiting.push([i, promise]);
      toProbe.push(i);
    }
    try {
      const results = await engine.verifyMany(
        toProbe.map((i) => emails[i]!),
        { signal },
      );
      signal.throwIfAborted();
      toProbe.forEach((index, k) => (rows[index] = toRow(results[k]!)));
      for (const o of owned.values()) o.resolve(rows[o.index]!);
    } catch (err) {
      // Let a later attempt (here or in another chunk) probe these again.
      for (const [key, o] of owned) {
        known.delete(key);
        o.reject(err);
      }
      throw err;
    }
    for (const [index, promise] of waiting) rows[index] = await promise;
    return rows as ResultRow[];
  }

  return async (job, emails, signal, repeats = []) => {
    if (job.mode === 'test') {
      const rows = emails.map((e) => toRow(testModeResult(e, deps.verifier, deps.testDomain)));
      if (deps.testModeChunkDelayMs > 0) await sleep(deps.testModeChunkDelayMs, undefined, { signal });
      signal.throwIfAborted();
      return rows;
    }
    if (deps.batchEngine === null) throw new Error('no batch engine in this process');
    return verifyLive(deps.batchEngine, job, emails, signal, repeats);
  };
}
