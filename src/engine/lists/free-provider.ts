/**
 * Free mailbox providers (gmail.com, yahoo.co.uk, gmx.de...), from the `email-providers`
 * package's `all.json`. Not `free-email-domains`: its postinstall script downloads the list
 * from the internet, which breaks offline and locked-down installs.
 *
 * Exact match only: a subdomain of a free provider (e.g. a company at `corp.mail.ru`) is not
 * the provider's own mailbox service.
 */
import { loadDomainList, normaliseDomain } from './domain-set.js';

let domains: Set<string> | undefined;

/** True when the domain is a known free mailbox provider. */
function load(): Set<string> {
  domains ??= loadDomainList('email-providers/all.json');
  return domains;
}

/** Reads the list now instead of on first use. */
export function loadFreeProviders(): void {
  load();
}

export function isFreeProvider(domain: string): boolean {
  return load().has(normaliseDomain(domain));
}
