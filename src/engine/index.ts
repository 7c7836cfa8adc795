/**
 * mailverdict's engine as a library: verify addresses (syntax, DNS/MX, SMTP probe, catch-all,
 * disposable/role/free flags) without HTTP, storage or accounts.
 *
 * ```ts
 * const verifier = createVerifier(loadConfig().engine);
 * const result = await verifier.verify('john@example.com', { timeoutMs: 3000 });
 * await verifier.close();
 * ```
 */
export { createVerifier } from './verifier.js';
export type { VerifierDeps } from './verifier.js';
export { parseAddress } from './syntax.js';
export { ResolverTrustMonitor, TRUST_OFF, RESOLVER_UNTRUSTED } from './dns/resolver-trust.js';
export type {
  ResolverTrust,
  ResolverTrustDeps,
  ResolverTrustOptions,
  ResolverTrustState,
  ResolverTrustStatus,
  TrustProbe,
} from './dns/resolver-trust.js';
export { REASONS, STATUSES, DEFAULT_TIMEOUT_MS, MIN_TIMEOUT_MS, MAX_TIMEOUT_MS } from './types.js';
export type {
  Check,
  Checks,
  DisposableCheck,
  DisposableSignal,
  DnsOptions,
  EngineOptions,
  FlagCheck,
  MxCheck,
  MxRecordInfo,
  ParsedAddress,
  Reason,
  SmtpCheck,
  SmtpOptions,
  Status,
  SyntaxCheck,
  TranscriptDirection,
  TranscriptLine,
  VerificationResult,
  Verifier,
  VerifyOptions,
} from './types.js';
export type { DnsOutcome, MailHost, SmtpEvidence, SmtpOutcome, SmtpOutcomeKind } from './outcome.js';
export type { BatchEngine, BatchEngineOptions, VerifyManyOptions } from './batch/types.js';
export { createBatchEngine } from './batch/batch-engine.js';
