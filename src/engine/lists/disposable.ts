/**
 * Disposable (throw-away) mail domains, from the maintained `disposable-email-domains` package:
 * its main list plus its wildcard list. Subdomains of a listed domain match too, because
 * throw-away services hand out `anything.their-domain`.
 */
import { hasDomainOrParent, loadDomainList } from './domain-set.js';

let domains: Set<string> | undefined;

function load(): Set<string> {
  if (!domains) {
    domains = loadDomainList('disposable-email-domains/index.json');
    for (const d of loadDomainList('disposable-email-domains/wildcard.json')) domains.add(d);
  }
  return domains;
}

/** True when the (lower-cased, punycode) domain or a parent of it is a known disposable domain. */
/** Reads the list now instead of on first use. */
export function loadDisposableDomains(): void {
  load();
}

export function isDisposableDomain(domain: string): boolean {
  return !domain.startsWith('[') && hasDomainOrParent(load(), domain);
}
