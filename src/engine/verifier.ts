/**
 * The composed engine: syntax → offline lists → DNS → SMTP probe → verdict, and the
 * explainable `VerificationResult` built from what each step found out.
 *
 * A disposable domain (by the domain lists, or by its MX hosts: lists/disposable-mx-hosts.ts) is
 * resolved (so `mx` tells the truth) but never probed: its verdict is risky `disposable_domain`
 * whatever the mailbox answers, and probing throwaway providers only spends time and the
 * prober's reputation.
 */
import type { DnsOutcome, SmtpOutcome } from './outcome.js';
import { MailHostResolver } from './dns/resolver.js';
import { RESOLVER_UNTRUSTED, type ResolverTrust } from './dns/resolver-trust.js';
import type { EgressGate } from './egress/egress.js';
import { disposableMxHost, isDisposableDomain, loadDisposableDomains } from './lists/disposable.js';
import { isFreeProvider, loadFreeProviders } from './lists/free-provider.js';
import { isRoleAddress } from './lists/role.js';
import { suggestCorrection } from './lists/typo.js';
import type { SharedSlots } from './sessions/single-sessions.js';
import { SmtpProber } from './probe.js';
import type { SessionBroker } from './sessions/broker.js';
import { TranscriptRecorder } from './smtp/transcript.js';
import { providerOfRecords } from './smtp/providers.js';
import { parseAddress } from './syntax.js';
import type { Verdict } from './verdict.js';
import { decideVerdict, invalidFormatVerdict } from './verdict.js';
import type {
  Checks,
  DisposableCheck,
  DisposableSignal,
  EngineOptions,
  FlagCheck,
  MxCheck,
  SmtpCheck,
  VerificationResult,
  Verifier,
  VerifyOptions,
  WellFormedAddress,
} from './types.js';
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from './types.js';

export interface VerifierDeps {
  /** Milliseconds since the epoch; drives the DNS and catch-all caches. */
  clock?: () => number;
  /** In [0, 1); MX shuffling, the catch-all local part and the proxy pick. Defaults: crypto/Math. */
  random?: () => number;
  logger?: { debug(obj: object, msg?: string): void };
  /** A monotonic clock in milliseconds for the transcript's `at_ms`. Default: performance.now. */
  now?: () => number;
  /** The reputation guard (egress/egress-guard.ts): probes do not go out through resting egresses. */
  guard?: EgressGate;
  /**
   * The process's session broker (sessions/broker.ts), which its batch engine asks too: one
   * per-host and per-provider cap for both kinds of request, and their idle sessions. Absent: the
   * single verifications' caps are their own.
   */
  broker?: SessionBroker;
  /**
   * Session slots shared with the batch engines of other processes (Redis): see
   * sessions/single-sessions.ts's `SharedSlots`. Absent: the caps hold in this process only.
   */
  sharedSlots?: SharedSlots;
  /** RFC 8305 §3's Resolution Delay (dns/resolver.ts; default 50 ms). */
  resolutionDelayMs?: number;
  /**
   * Whether the resolver tells the truth (dns/resolver-trust.ts): while it is not trusted, an
   * answer resting on its NXDOMAIN or "no mail host" is unknown / dns_error. Absent: believed.
   */
  trust?: ResolverTrust;
}

export interface Flags {
  disposable: boolean;
  /** What raised `disposable` (null when it is not raised), and for `mx_host` the host. */
  disposableBy: { signal: DisposableSignal; mxHost: string | null } | null;
  role: boolean;
  free: boolean;
}

/** Builds the engine. `close()` releases its sockets and timers. */
export function createVerifier(options: EngineOptions, deps: VerifierDeps = {}): Verifier {
  const shared: { clock?: () => number; random?: () => number } = {};
  if (deps.clock) shared.clock = deps.clock;
  if (deps.random) shared.random = deps.random;
  const resolver = new MailHostResolver(options.dns, {
    ...shared,
    ...(deps.resolutionDelayMs === undefined ? {} : { resolutionDelayMs: deps.resolutionDelayMs }),
    ...(deps.trust === undefined ? {} : { trust: deps.trust }),
  });
  // Load the domain lists now (about 100 ms, once per process) rather than in the first caller's request.
  loadDisposableDomains();
  loadFreeProviders();
  const prober = new SmtpProber(
    { ...options.smtp, catchAllTtlMs: options.catchAllTtlMs },
    {
      ...shared,
      ...(deps.guard === undefined ? {} : { guard: deps.guard }),
      ...(deps.broker === undefined ? {} : { broker: deps.broker }),
      ...(deps.sharedSlots === undefined ? {} : { sharedSlots: deps.sharedSlots }),
    },
  );
  const logger = deps.logger;

  async function verify(
    address: string | WellFormedAddress,
    verifyOptions: VerifyOptions = {},
  ): Promise<VerificationResult> {
    if (verifyOptions.transcript !== true) return run(address, verifyOptions, null);
    const recorder = new TranscriptRecorder(deps.now);
    try {
      const result = await run(address, verifyOptions, recorder);
      return { ...result, transcript: recorder.seal() };
    } finally {
      // Whatever a connection still does (its QUIT's close) is not this verification's any more.
      recorder.seal();
    }
  }

  async function run(
    address: string | WellFormedAddress,
    verifyOptions: VerifyOptions,
    recorder: TranscriptRecorder | null,
  ): Promise<VerificationResult> {
    const startedAt = performance.now();
    // A string is a library user's; the service passes the address it parsed at the request's entry.
    if (typeof address === 'string') {
      const parsed = parseAddress(address);
      if (!parsed.ok) return invalidResult(address, parsed.error, startedAt);
      return verifyParsed(parsed, verifyOptions, recorder, startedAt);
    }
    return verifyParsed(address, verifyOptions, recorder, startedAt);
  }

  async function verifyParsed(
    parsed: WellFormedAddress,
    verifyOptions: VerifyOptions,
    recorder: TranscriptRecorder | null,
    startedAt: number,
  ): Promise<VerificationResult> {
    const dns = await resolver.resolve(parsed.domain);
    const flags = listFlags(parsed.local, parsed.domain, dns);
    let smtp: SmtpOutcome | null = null;
    if (dns.kind === 'ok' && !flags.disposable) {
      smtp = await prober.probe({
        address: parsed.address,
        domain: parsed.domain,
        hosts: dns.hosts,
        timeoutMs: clampTimeout(verifyOptions.timeoutMs),
        recorder,
      });
    }
    const verdict = decideVerdict({ ...flags, dns, smtp });
    const result = buildResult(parsed, flags, dns, smtp, verdict, startedAt);
    logger?.debug(
      { domain: parsed.domain, status: result.status, reason: result.reason, latency_ms: result.latency_ms },
      'address verified',
    );
    return result;
  }

  function verifyOffline(email: string): VerificationResult {
    const startedAt = performance.now();
    const parsed = parseAddress(email);
    if (!parsed.ok) return invalidResult(email, parsed.error, startedAt);
    const flags = listFlags(parsed.local, parsed.domain);
    const verdict = decideVerdict({ ...flags, dns: null, smtp: null });
    return buildResult(parsed, flags, null, null, verdict, startedAt);
  }

  async function verifyMailHosts(email: string): Promise<VerificationResult> {
    const startedAt = performance.now();
    const parsed = parseAddress(email);
    if (!parsed.ok) return invalidResult(email, parsed.error, startedAt);
    const dns = await resolver.resolve(parsed.domain);
    const flags = listFlags(parsed.local, parsed.domain, dns);
    const verdict = decideVerdict({ ...flags, dns, smtp: null });
    return buildResult(parsed, flags, dns, null, verdict, startedAt);
  }

  async function close(): Promise<void> {
    await prober.close();
    resolver.close();
  }

  return {
    verify,
    verifyOffline,
    verifyMailHosts,
    close,
    sessionStats: () => prober.sessionStats(),
  };
}

function clampTimeout(timeoutMs: number | undefined): number {
  if (timeoutMs === undefined || !Number.isFinite(timeoutMs)) return DEFAULT_TIMEOUT_MS;
  return Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(timeoutMs)));
}

/**
 * The list flags of an address (exported for the batch engine, which builds the same results).
 * Given the domain's DNS answer, a domain on no list is disposable when its MX hosts belong to a
 * disposable provider; without it (offline), only the domain lists decide.
 */
export function listFlags(local: string, domain: string, dns: DnsOutcome | null = null): Flags {
  const disposableBy = disposableEvidence(domain, dns);
  return {
    disposable: disposableBy !== null,
    disposableBy,
    role: isRoleAddress(local),
    free: isFreeProvider(domain),
  };
}

/** Why the domain counts as disposable, or null: the domain lists first, then its MX hosts. */
export function disposableEvidence(domain: string, dns: DnsOutcome | null): Flags['disposableBy'] {
  if (isDisposableDomain(domain)) return { signal: 'domain_list', mxHost: null };
  const records = dns?.kind === 'ok' || dns?.kind === 'no_mail_host' ? dns.records : [];
  const match = disposableMxHost(records.map((r) => r.exchange));
  return match === null ? null : { signal: 'mx_host', mxHost: match.host };
}

export interface ParsedOk {
  local: string;
  domain: string;
  address: string;
  literal: boolean;
}

/** The full result from what each step found out (exported for the batch engine). */
export function buildResult(
  parsed: ParsedOk,
  flags: Flags,
  dns: DnsOutcome | null,
  smtp: SmtpOutcome | null,
  verdict: Verdict,
  startedAt: number,
): VerificationResult {
  const catchAll = smtp?.kind === 'accepted' ? smtp.catchAll : null;
  const checks: Checks = {
    syntax: { passed: true, local: parsed.local, domain: parsed.domain, error: null },
    mx: mxCheck(dns),
    smtp: smtpCheck(smtp),
    disposable: disposableCheck(flags),
    roleAddress: flagCheck(flags.role),
    freeProvider: flagCheck(flags.free),
    catchAll: { passed: catchAll === null ? null : !catchAll, value: catchAll },
  };
  return {
    email: parsed.address,
    valid: verdict.valid,
    status: verdict.status,
    score: verdict.score,
    disposable: flags.disposable,
    catchAll: catchAll === true,
    // Reachable mail hosts: a domain whose hosts are all internal (and so not probed) has none.
    mx: dns?.kind === 'ok' && dns.hosts.length > 0,
    reason: verdict.reason,
    latency_ms: Math.round(performance.now() - startedAt),
    did_you_mean: parsed.literal ? null : suggestCorrection(parsed.local, parsed.domain),
    checks,
  };
}

/** The result of a string that is not an address (exported for the batch engine). */
export function invalidResult(email: string, error: string, startedAt: number): VerificationResult {
  const verdict = invalidFormatVerdict();
  return {
    email,
    valid: verdict.valid,
    status: verdict.status,
    score: verdict.score,
    disposable: false,
    catchAll: false,
    mx: false,
    reason: verdict.reason,
    latency_ms: Math.round(performance.now() - startedAt),
    did_you_mean: null,
    checks: {
      syntax: { passed: false, local: null, domain: null, error },
      mx: mxCheck(null),
      smtp: smtpCheck(null),
      disposable: { passed: null, value: false, signal: null, mx_host: null },
      roleAddress: { passed: null, value: false },
      freeProvider: { passed: null, value: false },
      catchAll: { passed: null, value: null },
    },
  };
}

function flagCheck(flag: boolean): FlagCheck {
  return { passed: !flag, value: flag };
}

function disposableCheck(flags: Flags): DisposableCheck {
  const by = flags.disposableBy;
  return { ...flagCheck(flags.disposable), signal: by?.signal ?? null, mx_host: by?.mxHost ?? null };
}

const DNS_ERROR_NAMES: Readonly<Record<string, string>> = {
  ESERVFAIL: 'SERVFAIL',
  ETIMEOUT: 'TIMEOUT',
  EREFUSED: 'REFUSED',
  ECONNREFUSED: 'CONNREFUSED',
};

/** `checks.mx.explanation` of an answer that was not believed (docs/verdicts.md). */
export const UNTRUSTED_EXPLANATION =
  'the DNS resolver is not trusted (it denies names that must exist, or answers for names that do not): ' +
  'its NXDOMAIN or "no mail host" answer was not believed. Point --dns-server at a resolver that tells the truth.';

function mxCheck(dns: DnsOutcome | null): MxCheck {
  const check = mxCheckOf(dns);
  const untrusted = dns?.kind === 'error' && dns.detail === RESOLVER_UNTRUSTED;
  return {
    ...check,
    provider: providerOfRecords(check.records),
    ...(untrusted ? { explanation: UNTRUSTED_EXPLANATION } : {}),
  };
}

/** Whether a result is unknown only because the resolver was not trusted (batches retry those). */
export function restsOnUntrustedResolver(result: VerificationResult): boolean {
  return result.reason === 'dns_error' && result.checks.mx.error === RESOLVER_UNTRUSTED;
}

// MxCheck's index signature defeats Omit<>: the fields without the provider, spelt out.
type MxFound = Pick<MxCheck, 'passed' | 'records' | 'implicit' | 'error'>;

function mxCheckOf(dns: DnsOutcome | null): MxFound {
  if (dns === null) return { passed: null, records: [], implicit: false, error: null };
  switch (dns.kind) {
    case 'ok':
      // Every mail host internal (and so not probed): records exist, but none is reachable; the
      // top-level `mx` says false for the same reason (SPEC: "valid, reachable MX records").
      if (dns.hosts.length === 0)
        return { passed: false, records: dns.records, implicit: dns.implicit, error: 'INTERNAL_HOSTS_ONLY' };
      return { passed: true, records: dns.records, implicit: dns.implicit, error: null };
    case 'nxdomain':
      return { passed: false, records: [], implicit: false, error: 'NXDOMAIN' };
    case 'no_mail_host':
      return { passed: false, records: dns.records, implicit: false, error: 'NO_MAIL_HOST' };
    case 'null_mx':
      return { passed: false, records: [{ exchange: '.', priority: 0 }], implicit: false, error: 'NULL_MX' };
    case 'error':
      // Inconclusive: the answer could not be found out.
      return { passed: null, records: [], implicit: false, error: DNS_ERROR_NAMES[dns.detail] ?? dns.detail };
  }
}

function smtpCheck(smtp: SmtpOutcome | null): SmtpCheck {
  if (smtp === null) {
    return {
      passed: null,
      host: null,
      code: null,
      enhanced_code: null,
      message: null,
      tls: false,
      duration_ms: null,
    };
  }
  const { evidence } = smtp;
  return {
    passed: smtpPassed(smtp),
    host: evidence.host,
    code: evidence.code,
    enhanced_code: evidence.enhancedCode,
    message: evidence.message,
    tls: evidence.tls,
    duration_ms: evidence.durationMs,
  };
}

/** true: the mailbox accepts mail; false: the server said it cannot; null: could not find out. */
function smtpPassed(smtp: SmtpOutcome): boolean | null {
  switch (smtp.kind) {
    case 'accepted':
      return true;
    case 'rejected':
    case 'mailbox_full':
      return false;
    case 'greylisted':
    case 'blocked':
    case 'unavailable':
    case 'timeout':
    case 'unicode_unsupported':
      return null;
  }
}
