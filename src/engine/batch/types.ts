/**
 * The batch side of the engine: many addresses at once, grouped by domain and MX host, with
 * SMTP connections reused (RSET between transactions) and PIPELINING where offered.
 * `POST /v1/verify` keeps using `Verifier.verify`; batch jobs and `mailverdict batch` use this.
 */
import type { SessionStage } from '../smtp/session.js';
import type { EngineOptions, VerificationResult } from '../types.js';

/**
 * Sessions to one mail provider's MX hosts at once, per egress (docs/batch-engine.md,
 * "Provider-wide politeness"): two hosts' worth of the per-host cap. A provider judges a client
 * across its whole fleet, so 40,000 Microsoft 365 tenants are one server to be polite to.
 */
export const DEFAULT_PROVIDER_CONCURRENCY = 10;
/** Sessions opened to one provider's MX hosts in any second, per egress. */
export const DEFAULT_PROVIDER_SESSIONS_PER_SECOND = 2;

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

  // Tuning of pooled sessions; defaults in BATCH_DEFAULTS (batch-engine.ts), reasons in
  // docs/batch-engine.md.
  /** RCPTs per round trip when the server offers PIPELINING (also bounded by the rejects left). */
  pipelineDepth?: number;
  /** RCPTs per transaction before RSET and a new MAIL FROM (RFC 5321 requires servers to take 100). */
  recipientsPerTransaction?: number;
  /** RCPTs per session before QUIT and a fresh session. */
  recipientsPerSession?: number;
  /** Refused RCPTs per session before QUIT (Postfix slows a client after 10 errors, drops it after 20). */
  maxRejectsPerSession?: number;
  /** First back-off of a host after any failure; doubles per failure in a row. */
  hostBackoffMs?: number;
  hostBackoffMaxMs?: number;
  /**
   * Failures in a row (at any stage; only an answer about a recipient ends a streak) after which
   * a host's remaining addresses give up, or move to the next MX.
   */
  maxHostFailures?: number;
  /** Ready addresses per open session before another session to the same host opens. */
  itemsPerSession?: number;
  /** Lost connections one address may ride before it gives up as smtp_unavailable / smtp_timeout. */
  maxDrops?: number;
  /**
   * Lease of a per-host session slot in a shared coordination, renewed every third of it while
   * the session runs: how long the slots of a worker that died stay taken.
   */
  sessionLeaseMs?: number;
  /**
   * How long an egress that a host refused by policy (5.7.x, "too many connections from your
   * address", a blocklist) stays away from that host while other egresses carry on.
   */
  egressRestMs?: number;
  /**
   * Sessions to all the MX hosts of one mail provider at once (the provider table,
   * ../smtp/providers.ts), per egress, shared like the per-host cap.
   */
  providerConcurrency?: number;
  /** New sessions to one mail provider's MX hosts in any second, per egress, shared likewise. */
  providerSessionsPerSecond?: number;
}

export interface VerifyManyOptions {
  /**
   * Aborting stops the call: queued work is dropped, open sessions end after their round trip,
   * and the promise rejects with the signal's reason. Results settled before the abort have
   * been delivered through `onResult`.
   */
  signal?: AbortSignal;
  /** Called as addresses settle (index into the input list), in any order. */
  onResult?: (index: number, result: VerificationResult) => void;
  /**
   * Names the call (a job's id) in what the engine reports about it: the log line of an MX host
   * given up lists the labels of the calls whose addresses it settled.
   */
  label?: string;
}

export interface BatchEngine {
  /**
   * Verifies every address; resolves with one result per input, in input order. Malformed
   * strings get undeliverable / invalid_email_format; duplicates are probed once.
   */
  verifyMany(emails: readonly string[], options?: VerifyManyOptions): Promise<VerificationResult[]>;
  close(): Promise<void>;
}

/**
 * What the batch engine tells its embedder as it works; every method optional. `host` is the MX
 * host's IP address, `egress` the source address or proxy the session went out through
 * ('default' when there is one egress).
 */
export interface BatchEngineObserver {
  onSessionOpen?(host: string, egress: string): void;
  onSessionClose?(host: string, egress: string): void;
  /**
   * The engine stopped trying `host` and settled its remaining addresses as unknown. `reason` is
   * the failure's kind (unavailable, timeout, blocked, greylisted).
   */
  onHostGivenUp?(host: string, egress: string, reason: string, details?: HostGivenUpDetails): void;
}

/** What `onHostGivenUp` knows besides the host. */
export interface HostGivenUpDetails {
  /** Where the last failure happened: connect, banner, ehlo, starttls, mail, rcpt, rset. */
  stage: SessionStage;
  /** Addresses (and catch-all probes) settled by giving the host up. */
  addresses: number;
  /** The host's failures in a row. */
  failures: number;
}
