/**
 * Turns a chunk's addresses into result rows: test jobs through the fixed test-mode results
 * (no network), live jobs through the batch engine (per-domain grouping, connection reuse).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchEngine } from '../engine/batch/types.js';
import type { VerificationResult, Verifier } from '../engine/types.js';
import { testModeResult } from '../services/test-mode.js';
import type { ResultRow } from '../store/chunk-codec.js';
import type { JobMode } from '../store/schema/jobs.schema.js';

export type ChunkVerifier = (
  mode: JobMode,
  emails: readonly string[],
  signal: AbortSignal,
) => Promise<ResultRow[]>;

export interface ChunkVerifierDeps {
  verifier: Verifier;
  /** Null: this process cannot run live jobs (they fail loudly rather than silently pass). */
  batchEngine: BatchEngine | null;
  testDomain: string;
  testModeChunkDelayMs: number;
}

function toRow(r: VerificationResult): ResultRow {
  return { status: r.status, score: r.score, reason: r.reason, valid: r.valid };
}

export function createChunkVerifier(deps: ChunkVerifierDeps): ChunkVerifier {
  return async (mode, emails, signal) => {
    if (mode === 'test') {
      const rows = emails.map((e) => toRow(testModeResult(e, deps.verifier, deps.testDomain)));
      if (deps.testModeChunkDelayMs > 0) await sleep(deps.testModeChunkDelayMs, undefined, { signal });
      signal.throwIfAborted();
      return rows;
    }
    if (deps.batchEngine === null) throw new Error('no batch engine in this process');
    const results = await deps.batchEngine.verifyMany(emails, { signal });
    signal.throwIfAborted();
    return results.map(toRow);
  };
}
