/**
 * Single DNS look-ups of the kinds an operator's checks need (PTR, A/AAAA, TXT), through one
 * `node:dns` Resolver with the engine's servers, timeout and tries: never the system's
 * getaddrinfo or /etc/hosts, so that what is checked is what a mail server's resolver sees.
 * Unlike MailHostResolver nothing is cached: each question is asked once, when it is asked.
 */
import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { DnsOptions } from '../types.js';
import { classifyDnsError, dnsErrorCode } from './dns-errors.js';
import { invalidDnsServers } from './servers.js';

/** An answer: records; `none` (NXDOMAIN or no record of the type, a fact); or a transient error. */
export type Lookup<T> =
  | { kind: 'ok'; values: T[] }
  | { kind: 'none'; code: 'ENOTFOUND' | 'ENODATA' }
  | { kind: 'error'; code: string };

/** The DNS record types asked through `query` (those SPF evaluation needs, PTR, and NS for the resolver-trust probes). */
export type RecordType = 'A' | 'AAAA' | 'MX' | 'NS' | 'TXT' | 'PTR';

export class DnsLookups {
  readonly #resolver: dns.Resolver;
  readonly #budgetMs: number;

  constructor(options: Pick<DnsOptions, 'servers' | 'timeoutMs' | 'tries'>) {
    const invalid = invalidDnsServers(options.servers);
    if (invalid.length > 0)
      throw new Error(`invalid DNS server "${invalid.join('", "')}": use IP, IP:PORT or [IPv6]:PORT`);
    this.#resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: options.tries });
    if (options.servers.length > 0) this.#resolver.setServers(options.servers);
    // c-ares doubles its timeout on every try; see MailHostResolver for the measurement.
    this.#budgetMs = options.timeoutMs * options.tries;
  }

  /** The PTR names of an IP address (its in-addr.arpa / ip6.arpa name), without trailing dots. */
  async reverse(address: string): Promise<Lookup<string>> {
    const found = await this.#ask(() => this.#resolver.resolvePtr(reverseName(address)));
    return found.kind === 'ok' ? { kind: 'ok', values: found.values.map(hostName) } : found;
  }

  /** The A and AAAA addresses of a name: `none` only when both are proven absent. */
  async addresses(name: string): Promise<Lookup<string>> {
    const [v4, v6] = await Promise.all([
      this.#ask(() => this.#resolver.resolve4(name)),
      this.#ask(() => this.#resolver.resolve6(name)),
    ]);
    const values = [...(v4.kind === 'ok' ? v4.values : []), ...(v6.kind === 'ok' ? v6.values : [])];
    if (values.length > 0) return { kind: 'ok', values };
    if (v4.kind === 'error') return v4;
    if (v6.kind === 'error') return v6;
    return v4.kind === 'none' && v4.code === 'ENOTFOUND' ? v4 : { kind: 'none', code: 'ENODATA' };
  }

  /** The A records of a name (a DNSBL answer is one or more 127.0.0.x addresses). */
  a(name: string): Promise<Lookup<string>> {
    return this.#ask(() => this.#resolver.resolve4(name));
  }

  /** TXT records, each one string (its character-strings joined). */
  async txt(name: string): Promise<Lookup<string>> {
    const found = await this.#ask(() => this.#resolver.resolveTxt(name));
    return found.kind === 'ok' ? { kind: 'ok', values: found.values.map((parts) => parts.join('')) } : found;
  }

  /**
   * `dns.promises.resolve`'s shape, for libraries that take a resolver function (mailauth's SPF):
   * the answer, or the `node:dns` error with its code, within this resolver's budget.
   */
  query(name: string, type: RecordType): Promise<unknown[]> {
    return bounded(this.#resolver.resolve(name, type) as Promise<unknown[]>, this.#budgetMs);
  }

  /** Cancels queries in flight. */
  close(): void {
    this.#resolver.cancel();
  }

  async #ask<T>(query: () => Promise<T[]>): Promise<Lookup<T>> {
    try {
      const values = await bounded(query(), this.#budgetMs);
      return values.length > 0 ? { kind: 'ok', values } : { kind: 'none', code: 'ENODATA' };
    } catch (error) {
      const code = dnsErrorCode(error);
      if (classifyDnsError(code) === 'permanent' && (code === 'ENOTFOUND' || code === 'ENODATA'))
        return { kind: 'none', code };
      return { kind: 'error', code };
    }
  }
}

/** The PTR name of an address: `4.3.2.1.in-addr.arpa`, or the nibbles of an IPv6 under ip6.arpa. */
export function reverseName(address: string): string {
  return `${reversedLabels(address)}.${unmapped(address).kind() === 'ipv4' ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

/**
 * The address's labels in reverse order, as DNSBLs and reverse DNS ask them: `4.3.2.1` for
 * 1.2.3.4, 32 nibbles for an IPv6 address (an IPv4-mapped IPv6 address counts as IPv4).
 */
export function reversedLabels(address: string): string {
  const parsed = unmapped(address);
  const bytes = parsed.toByteArray();
  if (parsed.kind() === 'ipv4') return bytes.reverse().join('.');
  return bytes
    .flatMap((b) => [b >> 4, b & 0xf])
    .reverse()
    .map((n) => n.toString(16))
    .join('.');
}

/** The parsed address, an IPv4-mapped IPv6 address as the IPv4 address it maps. */
function unmapped(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

/** A DNS name as compared: lower case, without the trailing dot. */
export function hostName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Rejects with ETIMEOUT once `ms` have passed (the abandoned query ends on its own later). */
export function bounded<T>(query: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error('DNS query budget exhausted'), { code: 'ETIMEOUT' })),
      ms,
    );
  });
  return Promise.race([query, budget]).finally(() => clearTimeout(timer));
}
