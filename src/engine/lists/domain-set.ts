/**
 * Loading the packaged domain lists. The lists are immutable data, read once on first use so
 * importing the engine stays cheap; they hold no state that tests or callers could need to reset.
 */
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * Reads a JSON array of domain names shipped in a package and returns them lower-cased, in the
 * punycode form that `parseAddress` produces (some lists carry Unicode names).
 */
export function loadDomainList(specifier: string): Set<string> {
  const raw = require(specifier) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${specifier} is not a JSON array of domains`);
  const set = new Set<string>();
  for (const entry of raw) {
    if (typeof entry !== 'string') continue;
    const ascii = /^\p{ASCII}*$/u.test(entry) ? entry.toLowerCase() : domainToASCII(entry);
    if (ascii !== '') set.add(ascii);
  }
  return set;
}

/** Normalises a domain for a list lookup: lower-case, no trailing dot. */
export function normaliseDomain(domain: string): string {
  const lower = domain.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** True when `domain` or one of its parent domains (never the bare top-level label) is in `set`. */
export function hasDomainOrParent(set: ReadonlySet<string>, domain: string): boolean {
  const labels = normaliseDomain(domain).split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (set.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}
