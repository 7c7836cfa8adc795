/**
 * Free mailbox providers (gmail.com, yahoo.co.uk, gmx.de...), from the `email-providers`
 * package's `all.json`. Not `free-email-domains`: its postinstall script downloads the list
 * from the internet, which breaks offline and locked-down installs.
 *
 * Exact match only: a subdomain of a free provider (e.g. a company at `corp.mail.ru`) is not
 * the provider's own mailbox service.
 *
 * The package's list also holds typo domains that someone registered (gmial.com, hotmail.con,
 * yahoo.om): a domain for which the typo engine suggests a correction is not a free provider,
 * so an address never gets both `free` and a `did_you_mean`. Decided on lookup rather than by
 * filtering the list at load (27 of its 8,760 domains, but testing them all took 0.7-1.4 s on
 * the loaded 2-core development machine), and not by a hand-kept deny list, which would fall
 * behind the package and the typo engine.
 */
import { loadDomainList, normaliseDomain } from './domain-set.js';
import { suggestCorrection } from './typo.js';

let domains: Set<string> | undefined;

function load(): Set<string> {
  domains ??= loadDomainList('email-providers/all.json');
  return domains;
}

/** Reads the list now instead of on first use. */
export function loadFreeProviders(): void {
  load();
}

/** True when the domain is on the free-provider list and is no typo of a provider's domain. */
export function isFreeProvider(domain: string): boolean {
  const normalised = normaliseDomain(domain);
  return load().has(normalised) && suggestCorrection('a', normalised) === null;
}
