/**
 * Disposable (throw-away) mail domains, from the maintained `disposable-email-domains` package:
 * its main list plus its wildcard list. Subdomains of a listed domain match too, because
 * throw-away services hand out `anything.their-domain`.
 *
 * A domain too new for the list is still caught by its mail hosts: `disposableMxHost` matches MX
 * host names against the providers' own mail domains (disposable-mx-hosts.ts).
 */
import { DISPOSABLE_MX_PROVIDERS, type DisposableMxProvider } from './disposable-mx-hosts.js';
import { hasDomainOrParent, loadDomainList, normaliseDomain } from './domain-set.js';

let domains: Set<string> | undefined;

function load(): Set<string> {
  if (!domains) {
    domains = loadDomainList('disposable-email-domains/index.json');
    for (const d of loadDomainList('disposable-email-domains/wildcard.json')) domains.add(d);
  }
  return domains;
}

/** Reads the list now instead of on first use. */
export function loadDisposableDomains(): void {
  load();
}

/** True when the (lower-cased, punycode) domain or a parent of it is a known disposable domain. */
export function isDisposableDomain(domain: string): boolean {
  return !domain.startsWith('[') && hasDomainOrParent(load(), domain);
}

const providersBySuffix: ReadonlyMap<string, DisposableMxProvider> = new Map(
  DISPOSABLE_MX_PROVIDERS.map((p) => [p.suffix, p]),
);

export interface DisposableMxMatch {
  /** The MX host name that matched, as the DNS answer gave it. */
  host: string;
  provider: string;
}

/**
 * The first of `exchanges` (MX host names) that is a known disposable provider's mail host, or
 * null. One match is enough: a domain that hands any of its mail to a throw-away provider is that
 * provider's domain.
 */
export function disposableMxHost(exchanges: readonly string[]): DisposableMxMatch | null {
  for (const exchange of exchanges) {
    const labels = normaliseDomain(exchange).split('.');
    // Every parent of the host, down to (not including) the bare top-level label.
    for (let i = 0; i < labels.length - 1; i++) {
      const provider = providersBySuffix.get(labels.slice(i).join('.'));
      if (provider) return { host: exchange, provider: provider.provider };
    }
  }
  return null;
}
