/**
 * Finds the mail hosts of a domain, with their addresses, through one `node:dns` Resolver
 * (never the system's getaddrinfo, so the configured servers, timeout and tries apply to every
 * name the engine looks up). Answers are cached per domain.
 */
import { promises as dns } from 'node:dns';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { DnsOutcome, MailHost } from '../outcome.js';
import type { DnsOptions, MxRecordInfo } from '../types.js';
import { classifyDnsError, dnsErrorCode } from './dns-errors.js';
import { bounded } from './lookups.js';
import { invalidDnsServers } from './servers.js';
import { isInternalAddress } from '../net/internal-address.js';
import { RESOLVER_UNTRUSTED, type ResolverTrust } from './resolver-trust.js';

export interface ResolverDeps {
  /** Milliseconds since the epoch; drives cache expiry. */
  clock?: () => number;
  /** In [0, 1); shuffles MX hosts of equal preference. */
  random?: () => number;
  /** How many domains the cache holds at most (default 10,000). */
  cacheSize?: number;
  /** RFC 8305 §3's Resolution Delay (default 50 ms). */
  resolutionDelayMs?: number;
  /**
   * Whether this resolver tells the truth (resolver-trust.ts). Given, an NXDOMAIN or "no mail
   * host" answer is believed (and cached) only while it judges the resolver trusted; otherwise it
   * becomes `error` RESOLVER_UNTRUSTED, cached nowhere. Absent: every answer is believed.
   */
  trust?: ResolverTrust;
}

/**
 * Transient failures (SERVFAIL, timeout) are cached for a few seconds only: long enough that a
 * batch of thousands of addresses at one broken domain does not wait out a DNS timeout per
 * address, short enough that a retry a moment later asks again.
 */
const TRANSIENT_TTL_MS = 5_000;
/** Bounds memory on batches with very many distinct domains; least recently used go first. */
const DEFAULT_CACHE_SIZE = 10_000;

interface CacheEntry {
  /** For 'ok', hosts are in preference order and not yet shuffled. */
  outcome: DnsOutcome;
  expiresAt: number;
}

interface HostAddresses {
  addresses: string[];
  /** The transient error code when the addresses could not be found out. */
  transient: string | null;
  /** The other family's addresses, when its answer had not come yet (RFC 8305 §3). */
  late?: Promise<string[]>;
}

/** RFC 8305 §3's recommended Resolution Delay: how long an A answer waits for the AAAA answer. */
export const RESOLUTION_DELAY_MS = 50;

type Settled<T> = PromiseSettledResult<T>;
const settle = <T>(promise: Promise<T>): Promise<Settled<T>> =>
  promise.then(
    (value) => ({ status: 'fulfilled', value }) as const,
    (reason: unknown) => ({ status: 'rejected', reason }) as const,
  );
const addressesIn = (result: Settled<string[]>): string[] =>
  result.status === 'fulfilled' ? result.value : [];
const delay = <T>(ms: number, value: T): Promise<T> =>
  new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());

/** A mail host with its addresses; the late family's are added to it when they come. */
function mailHost(record: MxRecordInfo, found: HostAddresses): MailHost {
  const host: MailHost = { ...record, addresses: found.addresses };
  if (found.late !== undefined) {
    host.lateAddresses = found.late.then((late) => {
      for (const address of late) if (!host.addresses.includes(address)) host.addresses.push(address);
      delete host.lateAddresses;
      return late;
    });
  }
  return host;
}

/** Resolves a domain to the mail hosts to try, following RFC 5321 §5.1 and RFC 7505. */
export class MailHostResolver {
  readonly #resolver: dns.Resolver;
  readonly #options: DnsOptions;
  readonly #clock: () => number;
  readonly #random: () => number;
  readonly #cacheSize: number;
  readonly #resolutionDelayMs: number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, Promise<DnsOutcome>>();
  readonly #trust: ResolverTrust | null;
  readonly #stopWatchingTrust: () => void;
  #closed = false;

  constructor(options: DnsOptions, deps: ResolverDeps = {}) {
    this.#options = options;
    this.#clock = deps.clock ?? Date.now;
    this.#random = deps.random ?? Math.random;
    this.#cacheSize = deps.cacheSize ?? DEFAULT_CACHE_SIZE;
    this.#resolutionDelayMs = deps.resolutionDelayMs ?? RESOLUTION_DELAY_MS;
    this.#trust = deps.trust ?? null;
    // Negative answers cached while the resolver was trusted are not given again once it is not.
    this.#stopWatchingTrust =
      this.#trust?.onChange((status) => {
        if (status.state !== 'trusted' && status.state !== 'off') this.#forgetNegatives();
      }) ?? (() => undefined);
    this.#resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: options.tries });
    const invalid = invalidDnsServers(options.servers);
    if (invalid.length > 0) {
      throw new Error(`invalid DNS server "${invalid.join('", "')}": use IP, IP:PORT or [IPv6]:PORT`);
    }
    if (options.servers.length > 0) this.#resolver.setServers(options.servers);
  }

  /** The mail hosts of `domain` in the order to try them. Never rejects. */
  async resolve(domain: string): Promise<DnsOutcome> {
    const name = domain.toLowerCase().replace(/\.$/, '');
    const literal = resolveLiteral(name);
    if (literal !== null) return this.#present(literal);
    if (this.#closed) return { kind: 'error', detail: 'ECANCELLED' };

    const cached = this.#cache.get(name);
    if (cached !== undefined) {
      this.#cache.delete(name);
      if (cached.expiresAt > this.#clock() && (!isNegative(cached.outcome) || this.#trusted())) {
        this.#cache.set(name, cached);
        return this.#present(cached.outcome);
      }
    }

    let pending = this.#inFlight.get(name);
    if (pending === undefined) {
      pending = this.#lookup(name)
        .then(async (outcome) => {
          if (isNegative(outcome) && this.#trust !== null && !(await this.#trust.believeNegative()))
            return { kind: 'error', detail: RESOLVER_UNTRUSTED } as const;
          this.#remember(name, outcome);
          return outcome;
        })
        .finally(() => this.#inFlight.delete(name));
      this.#inFlight.set(name, pending);
    }
    return this.#present(await pending);
  }

  /** Cancels queries in flight (they resolve as `error` ECANCELLED) and refuses new ones. */
  close(): void {
    this.#closed = true;
    this.#stopWatchingTrust();
    this.#resolver.cancel();
    this.#cache.clear();
  }

  #trusted(): boolean {
    const state = this.#trust?.status().state ?? 'off';
    return state === 'trusted' || state === 'off';
  }

  #forgetNegatives(): void {
    for (const [name, entry] of this.#cache) if (isNegative(entry.outcome)) this.#cache.delete(name);
  }

  async #lookup(name: string): Promise<DnsOutcome> {
    let answer: { exchange: string; priority: number }[];
    try {
      answer = await this.#bounded(this.#resolver.resolveMx(name));
    } catch (err) {
      const code = dnsErrorCode(err);
      if (code === 'ENOTFOUND') return { kind: 'nxdomain' };
      if (code === 'ENODATA') return this.#implicitMx(name);
      return { kind: 'error', detail: code };
    }
    if (answer.length === 0) return this.#implicitMx(name);

    // RFC 7505: "MX 0 ." declares that the domain accepts no mail. A stray "." next to real
    // records is a misconfiguration; the real records win.
    const records = dedupeRecords(answer.filter((r) => !isNullExchange(r.exchange)));
    if (records.length === 0) return { kind: 'null_mx' };

    const resolved = await Promise.all(records.map((r) => this.#addressesOf(r.exchange)));
    const hosts: MailHost[] = [];
    let transient: string | null = null;
    records.forEach((record, i) => {
      const found = resolved[i]!;
      if (found.addresses.length > 0) hosts.push(mailHost(record, found));
      else transient ??= found.transient;
    });
    if (hosts.length > 0) return { kind: 'ok', records, implicit: false, hosts };
    // No target has an address. Only when every target is proven absent is that a fact about
    // the domain; if one lookup failed, the answer is unknown.
    if (transient !== null) return { kind: 'error', detail: transient };
    return { kind: 'no_mail_host', records };
  }

  /** RFC 5321 §5.1: without MX records the domain itself is the mail host. */
  async #implicitMx(name: string): Promise<DnsOutcome> {
    const found = await this.#addressesOf(name);
    if (found.addresses.length > 0) {
      return {
        kind: 'ok',
        records: [],
        implicit: true,
        hosts: [mailHost({ exchange: name, priority: 0 }, found)],
      };
    }
    if (found.transient !== null) return { kind: 'error', detail: found.transient };
    return { kind: 'no_mail_host', records: [] };
  }

  async #addressesOf(host: string): Promise<HostAddresses> {
    if (isIP(host) !== 0) return { addresses: [host], transient: null };
    const asked4 = settle(this.#bounded(this.#resolver.resolve4(host)));
    const asked6 = settle(this.#bounded(this.#resolver.resolve6(host)));
    // RFC 8305 §3: the race need not wait for both answers. AAAA first: go at once, A joins
    // later; A first: wait up to the Resolution Delay for AAAA, then go with IPv4, AAAA joins later.
    let answered4 = false;
    void asked4.then(() => (answered4 = true));
    const first = await Promise.race([asked4.then(() => 4), asked6.then(() => 6)]);
    if (first === 6) {
      const v6 = await asked6;
      if (addressesIn(v6).length > 0 && !answered4)
        return { addresses: addressesIn(v6), transient: null, late: asked4.then(addressesIn) };
    } else {
      const v4 = await asked4;
      if (addressesIn(v4).length > 0) {
        const inTime = await Promise.race([asked6.then(() => true), delay(this.#resolutionDelayMs, false)]);
        if (!inTime) return { addresses: addressesIn(v4), transient: null, late: asked6.then(addressesIn) };
      }
    }
    const [v4, v6] = await Promise.all([asked4, asked6]);
    // IPv4 first: many hosts that run the prober have no IPv6 route at all.
    const addresses = [...addressesIn(v4), ...addressesIn(v6)];
    let transient: string | null = null;
    for (const result of [v4, v6]) {
      if (result.status === 'rejected') {
        const code = dnsErrorCode(result.reason);
        if (classifyDnsError(code) === 'transient') transient ??= code;
      }
    }
    return { addresses, transient };
  }

  /**
   * c-ares doubles the timeout on every retry (measured on Node 20: timeout 200 ms with 3 tries
   * gives up after 1.6 s, not 0.6 s), and Node 20 has no `maxTimeout`. A query therefore gets
   * `timeoutMs × tries` in all, the budget the settings suggest; the abandoned query ends on its
   * own later and its answer is dropped.
   */
  #bounded<T>(query: Promise<T>): Promise<T> {
    return bounded(query, this.#options.timeoutMs * this.#options.tries);
  }

  #remember(name: string, outcome: DnsOutcome): void {
    const ttl = this.#ttlOf(outcome);
    if (ttl <= 0 || this.#closed) return;
    this.#cache.set(name, { outcome, expiresAt: this.#clock() + ttl });
    if (this.#cache.size > this.#cacheSize) {
      // Map iteration follows insertion order, and hits are re-inserted: the first key is the
      // least recently used.
      const oldest = this.#cache.keys().next();
      if (oldest.done !== true) this.#cache.delete(oldest.value);
    }
  }

  #ttlOf(outcome: DnsOutcome): number {
    switch (outcome.kind) {
      case 'ok':
        return outcome.hosts.length === outcome.records.length || outcome.implicit
          ? this.#options.positiveTtlMs
          : // Some targets were dropped; if that was a passing failure, ask again soon.
            Math.min(this.#options.positiveTtlMs, this.#options.negativeTtlMs);
      case 'nxdomain':
      case 'no_mail_host':
      case 'null_mx':
        return this.#options.negativeTtlMs;
      case 'error':
        return outcome.detail === 'ECANCELLED' || outcome.detail === RESOLVER_UNTRUSTED
          ? 0
          : Math.min(TRANSIENT_TTL_MS, this.#options.negativeTtlMs);
    }
  }

  /** A fresh copy for the caller, with hosts of equal preference shuffled anew each time. */
  #present(outcome: DnsOutcome): DnsOutcome {
    if (outcome.kind !== 'ok') return outcome;
    return {
      ...outcome,
      records: outcome.records.map((r) => ({ ...r })),
      hosts: shuffleEqualPreferences(this.#probeable(outcome.hosts), this.#random),
    };
  }

  /**
   * Drops internal addresses unless allowed: a mail host inside our own network is not the
   * recipient's. A domain left with no host is answered `ok` with no hosts, so the probe reports
   * unknown / smtp_unavailable ("could not find out"), never a missing mailbox.
   */
  #probeable(hosts: MailHost[]): MailHost[] {
    if (this.#options.allowInternalTargets ?? true) return hosts;
    const external = (addresses: string[]): string[] => addresses.filter((a) => !isInternalAddress(a));
    return hosts
      .map((h) => ({
        ...h,
        addresses: external(h.addresses),
        ...(h.lateAddresses === undefined ? {} : { lateAddresses: h.lateAddresses.then(external) }),
      }))
      .filter((h) => h.addresses.length > 0);
  }
}

/** The answers a lying resolver can make up: NXDOMAIN and "no mail host" (a null MX is a record). */
function isNegative(outcome: DnsOutcome): boolean {
  return outcome.kind === 'nxdomain' || outcome.kind === 'no_mail_host';
}

function isNullExchange(exchange: string): boolean {
  return exchange === '' || exchange === '.';
}

/** Lower-cased, without trailing dots, one entry per host (its best preference), sorted. */
function dedupeRecords(answer: { exchange: string; priority: number }[]): MxRecordInfo[] {
  const best = new Map<string, number>();
  for (const { exchange, priority } of answer) {
    const host = exchange.toLowerCase().replace(/\.$/, '');
    const known = best.get(host);
    if (known === undefined || priority < known) best.set(host, priority);
  }
  return [...best]
    .map(([exchange, priority]) => ({ exchange, priority }))
    .sort((a, b) => a.priority - b.priority);
}

/** Fisher-Yates within each run of equal preference; `hosts` must be sorted by preference. */
function shuffleEqualPreferences(hosts: MailHost[], random: () => number): MailHost[] {
  const out = hosts.map((h) => ({ ...h, addresses: [...h.addresses] }));
  let start = 0;
  while (start < out.length) {
    let end = start + 1;
    while (end < out.length && out[end]!.priority === out[start]!.priority) end++;
    for (let i = end - 1; i > start; i--) {
      const j = start + Math.floor(random() * (i - start + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    start = end;
  }
  return out;
}

/** `[1.2.3.4]` and `[IPv6:...]` name their host directly (RFC 5321 §4.1.3): no DNS. */
function resolveLiteral(name: string): DnsOutcome | null {
  if (!name.startsWith('[')) return null;
  const match = /^\[(?:ipv6:(.+)|(.+))\]$/.exec(name);
  const v6 = match?.[1];
  const v4 = match?.[2];
  const address = v6 !== undefined && isIPv6(v6) ? v6 : v4 !== undefined && isIPv4(v4) ? v4 : null;
  if (address === null) return { kind: 'error', detail: 'EBADNAME' };
  return {
    kind: 'ok',
    records: [],
    implicit: true,
    hosts: [{ exchange: address, priority: 0, addresses: [address] }],
  };
}
