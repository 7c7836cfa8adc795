/**
 * The engine's public vocabulary. The engine knows nothing of HTTP, storage or accounts:
 * it takes an address and options and returns a `VerificationResult`.
 */

/**
 * The mail providers the engine recognises from MX host names (the table of their host names is
 * smtp/providers.ts); the batch engine keeps a cap and a pace per provider.
 */
export const PROVIDERS = [
  'google',
  'microsoft',
  'yahoo',
  'apple',
  'proofpoint',
  'mimecast',
  'barracuda',
  'zoho',
  'yandex',
  'mailru',
  'gmx',
  'fastmail',
  'proton',
] as const;
export type Provider = (typeof PROVIDERS)[number];

export const STATUSES = ['deliverable', 'undeliverable', 'risky', 'unknown'] as const;
export type Status = (typeof STATUSES)[number];

/**
 * The complete, closed list of reasons. docs/verdicts.md documents every one; a test
 * asserts the two agree. `test_mode` is returned by the offline verification that test
 * keys use (no network checks ran).
 */
/** The reasons the engine itself returns. */
export const ENGINE_REASONS = [
  'invalid_email_format',
  'smtp_rejected',
  'mailbox_full',
  'catch_all',
  'disposable_domain',
  'greylisted',
  'smtp_blocked',
  'smtp_unavailable',
  'smtp_timeout',
  'smtp_unicode_unsupported',
  'dns_error',
  'domain_not_found',
  'no_mx_records',
  'null_mx',
  'test_mode',
] as const;

/**
 * Reasons decided by an account's own data before any network check (the service's delivery
 * outcomes and filters, docs/outcomes.md); the engine never returns them.
 */
export const ACCOUNT_REASONS = [
  'previously_bounced',
  'complained',
  'blocked_by_filter',
  'allowed_by_filter',
] as const;

/** Every reason a verdict can carry. */
export const REASONS = [...ENGINE_REASONS, ...ACCOUNT_REASONS] as const;
export type Reason = (typeof REASONS)[number];

/** One entry of `checks`. `passed: null` means not run or inconclusive. */
export interface Check {
  passed: boolean | null;
  [detail: string]: unknown;
}

export interface MxRecordInfo {
  exchange: string;
  priority: number;
}

export interface SyntaxCheck extends Check {
  /** Local part as given, domain lower-cased and IDNA-converted; null when syntax failed. */
  local: string | null;
  domain: string | null;
  /** Why the syntax check failed (human-readable), null when it passed. */
  error: string | null;
}

export interface MxCheck extends Check {
  records: MxRecordInfo[];
  /** true when no MX exists and the domain's own A/AAAA is used (RFC 5321 §5.1). */
  implicit: boolean;
  /** DNS outcome code when it failed: NXDOMAIN, NODATA, NULL_MX, SERVFAIL, TIMEOUT... */
  error: string | null;
  /**
   * The provider that runs the domain's mail, from its most preferred MX host names
   * (smtp/providers.ts); null for any other, and when no MX record is known.
   */
  provider: Provider | null;
  /**
   * Only when the resolver was not trusted (error RESOLVER_UNTRUSTED, dns/resolver-trust.ts):
   * why its negative answer was not believed, and what to do.
   */
  explanation?: string;
}

export interface SmtpCheck extends Check {
  host: string | null;
  code: number | null;
  enhanced_code: string | null;
  message: string | null;
  tls: boolean;
  duration_ms: number | null;
}

/** Flag checks: `passed` is true when no concern was raised (not disposable / not a role / not free). */
export interface FlagCheck extends Check {
  value: boolean;
}

/** Which signal raised the disposable flag (docs/verdicts.md, "The checks breakdown"). */
export type DisposableSignal = 'domain_list' | 'mx_host';

export interface DisposableCheck extends FlagCheck {
  /** null when the flag is not raised. `domain_list` wins when both fire. */
  signal: DisposableSignal | null;
  /** For `mx_host`: the MX host name that belongs to a disposable provider; else null. */
  mx_host: string | null;
}

/** One delivery outcome of the account's, as `checks.history` shows it (docs/outcomes.md). */
export interface HistoryEvent {
  /** `delivered`, `hard_bounce`, `soft_bounce`, `complaint`, `unsubscribed`, `opened`, `clicked`. */
  type: string;
  /** When it happened (ISO 8601). */
  at: string;
  /** Where it came from: `api`, `message`, an ESP's name, `upload`. */
  source: string;
}

/**
 * What the account's own sends say about the address (docs/outcomes.md). Set by the service
 * around the engine, never by the engine: `passed` false when an event suppressed the address,
 * true when a delivery or engagement is on record and no bounce after it, null otherwise.
 */
export interface HistoryCheck extends Check {
  /** The latest event of each type, newest first; empty when the account has none. */
  events: HistoryEvent[];
  /** The event the verdict rests on (a bounce, a complaint, a delivery), or null. */
  decided_by: HistoryEvent | null;
  /**
   * For a `catch_all` or `unknown` verdict: the account's outcomes at the address's domain and the
   * estimate built on them (docs/outcomes.md, "The calibrated score"); absent otherwise.
   */
  domain?: DomainEvidence;
}

/** The Beta-Binomial estimate of how likely mail to the domain is delivered (docs/outcomes.md). */
export interface DomainEvidence {
  delivered: number;
  hard_bounces: number;
  /** The prior, per provider: Beta(alpha, beta). */
  prior: { provider: string | null; alpha: number; beta: number };
  /** (delivered + alpha) / (delivered + hard_bounces + alpha + beta), 3 decimals. */
  estimate: number;
}

/** The account's filter that decided the verdict (docs/outcomes.md, "Filters"); set by the service. */
export interface FilterCheck extends Check {
  id: string;
  action: 'allow' | 'block';
  match: 'email' | 'domain' | 'mx' | 'tld';
  value: string;
}

export interface Checks {
  /** Only on live verifications through the service (docs/outcomes.md). */
  history?: HistoryCheck;
  /** Only when one of the account's filters decided (docs/outcomes.md). */
  filter?: FilterCheck;
  syntax: SyntaxCheck;
  mx: MxCheck;
  smtp: SmtpCheck;
  disposable: DisposableCheck;
  roleAddress: FlagCheck;
  freeProvider: FlagCheck;
  catchAll: Check;
}

export interface VerificationResult {
  /** The address as verified: local part as given, domain normalised. */
  email: string;
  valid: boolean;
  status: Status;
  score: number;
  disposable: boolean;
  catchAll: boolean;
  mx: boolean;
  reason: Reason | null;
  latency_ms: number;
  did_you_mean: string | null;
  checks: Checks;
  /**
   * The SMTP conversation, only when `VerifyOptions.transcript` asked for it (smtp/transcript.ts);
   * empty when no mail host was asked (bad syntax, DNS, a disposable domain).
   */
  transcript?: TranscriptLine[];
}

export type TranscriptDirection = 'out' | 'in';

/** One line of the SMTP conversation: written by the prober (`out`) or read from the server (`in`). */
export interface TranscriptLine {
  dir: TranscriptDirection;
  /** The line without its CRLF; markers that are not SMTP lines are in square brackets. */
  text: string;
  /** Milliseconds since the verification started. */
  at_ms: number;
}

export interface DnsOptions {
  /** "host" or "host:port" entries; empty means the system's resolvers. */
  servers: string[];
  timeoutMs: number;
  tries: number;
  positiveTtlMs: number;
  negativeTtlMs: number;
  /**
   * Whether mail hosts with internal addresses (loopback, private, link-local...) may be probed.
   * The service sets it from `--allow-internal-targets` (default false); the library's default is
   * true so that it can verify against test servers on this machine.
   */
  allowInternalTargets?: boolean;
}

export interface SmtpOptions {
  port: number;
  heloName: string;
  mailFrom: string;
  /** socks5://[user:pass@]host:port URLs; each is an egress (egress/egress.ts). Empty: direct. */
  proxies: string[];
  /**
   * Source addresses to connect from, `ip` or `ip=helo-name` (that egress's EHLO name; default
   * `heloName`); each is an egress with its own per-host politeness (egress/egress.ts). Absent or
   * empty: the system picks the source address.
   */
  sourceAddresses?: string[];
  /** How many MX hosts one probe tries at most. */
  maxMxHosts: number;
  /** STARTTLS: `opportunistic` (default), `never` or `required` (smtp/session.ts, `StarttlsMode`). */
  starttls?: 'opportunistic' | 'never' | 'required';
  /**
   * Warm sessions of single verifications (sessions/warm-pool.ts): idle time (0: none), lifetime and
   * verifications per session. Absent: the defaults (`WARM_DEFAULTS`).
   */
  sessions?: { idleMs?: number; maxAgeMs?: number; maxVerifications?: number };
  /** Sessions of single verifications open at once per MX host address and egress (default 5). */
  perHostConcurrency?: number;
  /** Sessions of single verifications open at once in all (default 200). */
  concurrency?: number;
  /**
   * Sessions of single verifications open at once to all the MX hosts of one mail provider, per
   * egress (smtp/providers.ts), and opened to them in any second: the batches' provider-wide
   * politeness (docs/batch-engine.md). Absent: no provider cap or pace.
   */
  providerConcurrency?: number;
  providerSessionsPerSecond?: number;
  /**
   * Happy Eyeballs (net/happy-eyeballs.ts) for a single verification's MX host with IPv4 and IPv6
   * addresses: the delay before the next address is tried while the first still connects
   * (default 250 ms, RFC 8305), and whether IPv4 goes first (default: IPv6 first, RFC 8305 §4).
   */
  connectAttemptDelayMs?: number;
  preferIpv4?: boolean;
  /**
   * How much later than the first TLS 1.3 session ticket the reply to the EHLO after STARTTLS must
   * come, beyond half a round trip, for its host to count as holding it (smtp/held-replies.ts,
   * docs/prober.md#starttls); it also bounds the wait for that ticket. Default 20 ms, less than the
   * shortest delayed acknowledgement (Linux: 40 ms) that the wait saves.
   */
  heldReplyMarginMs?: number;
}

export interface EngineOptions {
  dns: DnsOptions;
  smtp: SmtpOptions;
  catchAllTtlMs: number;
}

export interface VerifyOptions {
  /** Bounds the whole SMTP probe, 100-5000 ms. */
  timeoutMs?: number;
  /** true: the result carries `transcript`, the SMTP conversation of this verification. */
  transcript?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 3000;
export const MIN_TIMEOUT_MS = 100;
export const MAX_TIMEOUT_MS = 5000;

/**
 * SMTP sessions in flight per process, and per MX host (docs/batch-engine.md): of batches, and,
 * counted apart, of single verifications. The one place these defaults are written: config.ts
 * and the single prober (probe.ts) import them.
 */
export const DEFAULT_CONCURRENCY = 200;
export const DEFAULT_PER_HOST_CONCURRENCY = 5;

/** Outcome of the RFC 5321 syntax check. Nothing that fails here reaches DNS or the SMTP wire. */
export type ParsedAddress =
  | {
      ok: true;
      /** Local part exactly as given (quoted form kept). */
      local: string;
      /** Lower-cased, IDNA (punycode) domain, or an address literal such as "[127.0.0.1]". */
      domain: string;
      /** `${local}@${domain}` */
      address: string;
      /** True when the domain is an address literal ([IPv4] or [IPv6:...]). */
      literal: boolean;
    }
  | { ok: false; error: string };

/** An address parseAddress accepted. */
export type WellFormedAddress = Extract<ParsedAddress, { ok: true }>;

/** What the rest of the product uses of the engine. */
export interface Verifier {
  /**
   * Full verification: syntax, lists, DNS, SMTP probe, catch-all. Never throws for a bad address.
   * A caller that has parsed the address already (parseAddress) passes it parsed: it is not
   * parsed again.
   */
  verify(address: string | WellFormedAddress, options?: VerifyOptions): Promise<VerificationResult>;
  /** Syntax and offline list checks only; no network. Status unknown / reason test_mode unless the offline checks decide. */
  verifyOffline(email: string): VerificationResult;
  /**
   * Syntax, lists and the DNS look-up of the mail hosts, no SMTP: what a caller needs to match
   * the MX hosts (`checks.mx.records`) before deciding whether to probe. Its verdict is the one
   * of a verification whose probe did not run.
   */
  verifyMailHosts(email: string): Promise<VerificationResult>;
  /** Closes sockets and timers. */
  close(): Promise<void>;
  /** The single verifications' SMTP sessions: open per host, opened, reused, closed by the server. */
  sessionStats?(): SessionPoolStats;
}

/** What `/metrics` shows of the warm sessions of single verifications (sessions/warm-pool.ts). */
export interface SessionPoolStats {
  /** Sessions open now (idle or in use), per MX host address. */
  openByHost: ReadonlyMap<string, number>;
  /** Sessions opened, verifications carried by an already open session, sessions the server closed. */
  opened: number;
  /**
   * Batch sessions kept idle in the session broker for single verifications when their host had no
   * batch work left, instead of being closed (sessions/broker.ts).
   */
  adopted?: number;
  reused: number;
  closedByServer: number;
}
