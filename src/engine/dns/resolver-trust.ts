/**
 * Whether the DNS resolver tells the truth. A resolver that answers NXDOMAIN for every name (a
 * captive portal, a filtering or broken resolver, a container's wrong /etc/resolv.conf) would
 * otherwise make every real mailbox `undeliverable`. The monitor asks names that must exist (the
 * root's NS, the MX of a few big providers) and one that must not (a random label under a real
 * TLD), at start-up, periodically and after a burst of negative answers; the resolver
 * (resolver.ts) believes its own NXDOMAIN and "no mail host" answers only while the monitor
 * judges it trusted.
 *
 * The judgement, from the probes:
 *  - the name that must not exist resolved: `untrusted` (the resolver invents answers);
 *  - at least half of the names that must exist, among those that got an answer, were denied
 *    (NXDOMAIN, or no record): `untrusted`. A filtering resolver that denies one name of several
 *    stays trusted, and its real NXDOMAIN answers keep their verdicts;
 *  - no name that must exist got an answer (timeouts, SERVFAIL): `unreachable`;
 *  - else `trusted`.
 * Only `trusted` (and `off`) lets a negative answer through: `unchecked`, `untrusted` and
 * `unreachable` turn it into `unknown` / `dns_error`.
 */
import type { DnsOptions } from '../types.js';
import { dnsErrorCode } from './dns-errors.js';
import { DnsLookups } from './lookups.js';

export type ResolverTrustState = 'off' | 'unchecked' | 'trusted' | 'untrusted' | 'unreachable';

/** What one probe name answered. */
export interface TrustProbe {
  name: string;
  type: 'NS' | 'MX' | 'A';
  /** `exists`: the name must have records; `absent`: the name must not exist. */
  expect: 'exists' | 'absent';
  /** `answered`: records came; `denied`: NXDOMAIN or no record; `failed`: timeout, SERVFAIL... */
  outcome: 'answered' | 'denied' | 'failed';
  /** The `node:dns` error code when not answered. */
  code: string | null;
}

export interface ResolverTrustStatus {
  state: ResolverTrustState;
  /** When the last check finished (epoch ms); null before the first. */
  checkedAt: number | null;
  /** Why the resolver is not trusted, in one sentence; null when trusted, off or unchecked. */
  reason: string | null;
  /** The last check's probes. */
  probes: readonly TrustProbe[];
}

/** What the resolver and the rest of the house consult. */
export interface ResolverTrust {
  status(): ResolverTrustStatus;
  /**
   * Whether a negative answer (NXDOMAIN, no mail host) just received may be believed. Counts it
   * towards the burst that triggers a re-check; waits for a check in flight, or for the first
   * check when none has run yet. Never rejects.
   */
  believeNegative(): Promise<boolean>;
  /** Runs a check now (or joins the one in flight) and returns the judgement. Never rejects. */
  check(): Promise<ResolverTrustStatus>;
  /** Resolves once the resolver is trusted (or off); rejects with the signal's reason when aborted. */
  whenTrusted(signal?: AbortSignal): Promise<void>;
  /** Calls `listener` on every change of state; returns what removes it. */
  onChange(listener: (status: ResolverTrustStatus) => void): () => void;
}

export interface ResolverTrustOptions {
  /** Names that must have records: `.` is asked for NS, any other name for MX. */
  names: readonly string[];
  /** A real TLD (or a test zone) under which a random label must not exist. */
  absentZone: string;
  /** Between two checks while trusted; 0: the monitor is off and every answer is believed. */
  intervalMs: number;
  /** Between two checks while not trusted (default: 30 s, or `intervalMs` when shorter). */
  retryIntervalMs?: number;
  /** Negative answers within `burstWindowMs` that trigger a re-check (default 5 in 10 s). */
  burstCount?: number;
  burstWindowMs?: number;
  /** A burst triggers no re-check sooner than this after the last one began (default 30 s). */
  minRecheckMs?: number;
}

export interface ResolverTrustDeps {
  /** `dns.promises.resolve`'s shape, through the resolver under judgement (DnsLookups.query). */
  query(name: string, type: 'NS' | 'MX' | 'A'): Promise<unknown[]>;
  /** Milliseconds since the epoch. */
  now(): number;
  /** In [0, 1): the random label of the name that must not exist. */
  random?: () => number;
  logger?: {
    warn(obj: object, msg?: string): void;
    info(obj: object, msg?: string): void;
  };
  /** Called by `close()`: releases what `query` holds. */
  release?: () => void;
}

/** Defaults of the burst detector and of re-checks while not trusted. */
export const TRUST_DEFAULTS = {
  retryIntervalMs: 30_000,
  burstCount: 5,
  burstWindowMs: 10_000,
  minRecheckMs: 30_000,
} as const;

/** The `checks.mx.error` of an answer not believed because the resolver is not trusted. */
export const RESOLVER_UNTRUSTED = 'RESOLVER_UNTRUSTED';

/** A monitor that believes every answer (a library user's engine, `--dns-trust-interval off`). */
export const TRUST_OFF: ResolverTrust = {
  status: () => ({ state: 'off', checkedAt: null, reason: null, probes: [] }),
  believeNegative: () => Promise.resolve(true),
  check: () => Promise.resolve({ state: 'off', checkedAt: null, reason: null, probes: [] }),
  whenTrusted: () => Promise.resolve(),
  onChange: () => () => undefined,
};

export class ResolverTrustMonitor implements ResolverTrust {
  readonly #options: Required<ResolverTrustOptions>;
  readonly #deps: ResolverTrustDeps;
  readonly #random: () => number;
  #status: ResolverTrustStatus = { state: 'unchecked', checkedAt: null, reason: null, probes: [] };
  #inFlight: Promise<ResolverTrustStatus> | null = null;
  #lastCheckStartedAt = -Infinity;
  #negatives: number[] = [];
  readonly #listeners = new Set<(status: ResolverTrustStatus) => void>();
  #timer: NodeJS.Timeout | null = null;
  #running = false;

  constructor(options: ResolverTrustOptions, deps: ResolverTrustDeps) {
    this.#options = {
      retryIntervalMs: Math.min(TRUST_DEFAULTS.retryIntervalMs, options.intervalMs || Infinity),
      burstCount: TRUST_DEFAULTS.burstCount,
      burstWindowMs: TRUST_DEFAULTS.burstWindowMs,
      minRecheckMs: TRUST_DEFAULTS.minRecheckMs,
      ...options,
    };
    this.#deps = deps;
    this.#random = deps.random ?? Math.random;
    if (options.intervalMs <= 0) this.#status = { ...this.#status, state: 'off' };
  }

  get #off(): boolean {
    return this.#options.intervalMs <= 0;
  }

  status(): ResolverTrustStatus {
    return this.#status;
  }

  /** Checks now, then again every interval (sooner while not trusted) until `stop()`. */
  start(): void {
    if (this.#off || this.#running) return;
    this.#running = true;
    void this.#tick();
  }

  stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    return this.#inFlight?.then(() => undefined) ?? Promise.resolve();
  }

  /** Stops, then releases the resolver it asks. */
  async close(): Promise<void> {
    await this.stop();
    this.#deps.release?.();
  }

  check(): Promise<ResolverTrustStatus> {
    if (this.#off) return Promise.resolve(this.#status);
    this.#inFlight ??= this.#probeAll().finally(() => (this.#inFlight = null));
    return this.#inFlight;
  }

  async believeNegative(): Promise<boolean> {
    if (this.#off) return true;
    const now = this.#deps.now();
    const windowStart = now - this.#options.burstWindowMs;
    this.#negatives = this.#negatives.filter((at) => at > windowStart);
    this.#negatives.push(now);
    const burst =
      this.#negatives.length >= this.#options.burstCount &&
      now - this.#lastCheckStartedAt >= this.#options.minRecheckMs;
    if (burst) this.#negatives = [];
    if (burst || this.#status.state === 'unchecked' || this.#inFlight !== null) await this.check();
    return this.#status.state === 'trusted';
  }

  async whenTrusted(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const state = this.#status.state;
    if (state === 'trusted' || state === 'off') return;
    if (state === 'unchecked') {
      await this.check();
      return this.whenTrusted(signal);
    }
    await new Promise<void>((resolve, reject) => {
      const done = (): void => {
        stopListening();
        signal?.removeEventListener('abort', aborted);
      };
      const aborted = (): void => {
        done();
        const reason: unknown = signal?.reason;
        reject(reason instanceof Error ? reason : new Error('aborted', { cause: reason }));
      };
      const stopListening = this.onChange((status) => {
        if (status.state !== 'trusted') return;
        done();
        resolve();
      });
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  onChange(listener: (status: ResolverTrustStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async #tick(): Promise<void> {
    await this.check();
    if (!this.#running) return;
    const wait = this.#status.state === 'trusted' ? this.#options.intervalMs : this.#options.retryIntervalMs;
    this.#timer = setTimeout(() => void this.#tick(), wait);
    this.#timer.unref();
  }

  async #probeAll(): Promise<ResolverTrustStatus> {
    this.#lastCheckStartedAt = this.#deps.now();
    const label = `mv-absent-${Math.floor(this.#random() * 2 ** 48).toString(36)}`;
    const zone = this.#options.absentZone.replace(/^\.+|\.+$/g, '');
    const asked: Omit<TrustProbe, 'outcome' | 'code'>[] = [
      ...this.#options.names.map((name) => {
        const root = name === '.' || name === '';
        return {
          name: root ? '.' : name,
          type: root ? ('NS' as const) : ('MX' as const),
          expect: 'exists' as const,
        };
      }),
      { name: zone === '' ? label : `${label}.${zone}`, type: 'A', expect: 'absent' },
    ];
    const probes = await Promise.all(asked.map((probe) => this.#ask(probe)));
    const status = judge(probes, this.#deps.now());
    this.#set(status);
    return status;
  }

  async #ask(probe: Omit<TrustProbe, 'outcome' | 'code'>): Promise<TrustProbe> {
    try {
      const records = await this.#deps.query(probe.name, probe.type);
      return {
        ...probe,
        outcome: records.length > 0 ? 'answered' : 'denied',
        code: records.length > 0 ? null : 'ENODATA',
      };
    } catch (error) {
      const code = dnsErrorCode(error);
      const denied = code === 'ENOTFOUND' || code === 'ENODATA';
      return { ...probe, outcome: denied ? 'denied' : 'failed', code };
    }
  }

  #set(status: ResolverTrustStatus): void {
    const before = this.#status.state;
    this.#status = status;
    if (before === status.state) return;
    const log = this.#deps.logger;
    if (status.state === 'trusted') log?.info({ resolver: status.state }, 'the DNS resolver is trusted');
    else
      log?.warn(
        { resolver: status.state, reason: status.reason },
        'the DNS resolver is not trusted: its NXDOMAIN and "no mail host" answers become unknown / dns_error',
      );
    for (const listener of this.#listeners) listener(status);
  }
}

/**
 * A monitor of the resolver the engine is given (`dns`: its servers, timeout and tries), asking
 * through its own `node:dns` Resolver. `close()` releases it.
 */
export function createResolverTrust(
  dns: Pick<DnsOptions, 'servers' | 'timeoutMs' | 'tries'>,
  options: ResolverTrustOptions,
  deps: Omit<ResolverTrustDeps, 'query' | 'release'>,
): ResolverTrustMonitor {
  const lookups = new DnsLookups(dns);
  return new ResolverTrustMonitor(options, {
    ...deps,
    query: (name, type) => lookups.query(name, type),
    release: () => lookups.close(),
  });
}

/** The judgement of one check's probes (the table in this file's comment). */
export function judge(probes: readonly TrustProbe[], checkedAt: number): ResolverTrustStatus {
  const must = probes.filter((p) => p.expect === 'exists');
  const answered = must.filter((p) => p.outcome === 'answered').length;
  const denied = must.filter((p) => p.outcome === 'denied');
  const invented = probes.find((p) => p.expect === 'absent' && p.outcome === 'answered');
  const base = { checkedAt, probes };
  if (invented !== undefined)
    return {
      ...base,
      state: 'untrusted',
      reason: `the resolver answers for ${invented.name}, a name that does not exist: it invents answers`,
    };
  if (denied.length > 0 && denied.length * 2 >= answered + denied.length)
    return {
      ...base,
      state: 'untrusted',
      reason:
        `the resolver denies ${denied.length} of ${answered + denied.length} names that must exist ` +
        `(${denied.map((p) => `${p.name} ${p.type}: ${p.code ?? 'no record'}`).join(', ')})`,
    };
  if (answered === 0)
    return {
      ...base,
      state: 'unreachable',
      reason: `no name that must exist got an answer (${must.map((p) => `${p.name}: ${p.code ?? '?'}`).join(', ')})`,
    };
  return { ...base, state: 'trusted', reason: null };
}
