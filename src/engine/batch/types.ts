/**
 * The batch side of the engine: many addresses at once, grouped by domain and MX host, with
 * SMTP connections reused (RSET between transactions) and PIPELINING where offered.
 * `POST /v1/verify` keeps using `Verifier.verify`; batch jobs and `mailverdict batch` use this.
 */
import type { EngineOptions, VerificationResult } from '../types.js';

export interface BatchEngineOptions extends EngineOptions {
  /** Global cap of SMTP sessions in flight. */
  concurrency: number;
  /** Cap of concurrent SMTP sessions per MX host. */
  perHostConcurrency: number;
  greylistRetries: number;
  greylistDelayMs: number;
  /** Probe timeout per address, as timeout_ms for a single verification. */
  timeoutMs: number;
  /** 'pooled' (default) reuses sessions; 'per-address' opens one connection per address (benchmark baseline). */
  mode?: 'pooled' | 'per-address';
}

export interface VerifyManyOptions {
  signal?: AbortSignal;
  /** Called as addresses settle (index into the input list), in any order. */
  onResult?: (index: number, result: VerificationResult) => void;
}

export interface BatchEngine {
  /**
   * Verifies every address; resolves with one result per input, in input order. Malformed
   * strings get undeliverable / invalid_email_format; duplicates are probed once.
   */
  verifyMany(emails: readonly string[], options?: VerifyManyOptions): Promise<VerificationResult[]>;
  close(): Promise<void>;
}
