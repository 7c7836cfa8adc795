/**
 * Whether an address is on a DNS blocklist (RFC 5782): the reversed address under the list's
 * zone has an A record (listed, 127.0.0.x) or not (NXDOMAIN: not listed).
 *
 * Lists refuse to answer some askers and say so in band, with addresses of 127.255.255.0/24:
 * Spamhaus answers 127.255.255.254 to queries through public or open resolvers, 127.255.255.255
 * to resolvers over their volume limit and 127.255.255.252 to a mistyped zone. Such an answer,
 * and any answer outside 127.0.0.0/8 (a resolver that rewrites NXDOMAIN into an advert),
 * means "cannot tell", never "listed" and never "clean".
 */
import { isIP } from 'node:net';
import type { DnsLookups } from './lookups.js';
import { reversedLabels } from './lookups.js';

/** What the refusal codes mean, by answer; other 127.255.255.x answers are refusals too. */
export const DNSBL_REFUSALS: Readonly<Record<string, string>> = {
  '127.255.255.252': 'the zone name is mistyped (Spamhaus)',
  '127.255.255.254': 'queries through a public or open resolver are refused (Spamhaus)',
  '127.255.255.255': 'the resolver sent too many queries (Spamhaus)',
};

export type DnsblAnswer =
  | { kind: 'not_listed' }
  /** `codes`: the 127.0.0.x return codes; `reason`: the list's TXT record, when it has one. */
  | { kind: 'listed'; codes: string[]; reason: string | null }
  /** The list answered, but not about the address: it refused the query. */
  | { kind: 'refused'; codes: string[]; meaning: string }
  /** No answer (SERVFAIL, timeout, REFUSED): a transient DNS failure. */
  | { kind: 'error'; code: string };

/** The name asked of `zone` for `address`: `4.3.2.1.zen.spamhaus.org` for 1.2.3.4. */
export function dnsblQueryName(address: string, zone: string): string {
  return `${reversedLabels(address)}.${zone.replace(/\.$/, '')}`;
}

/** Asks `zone` about `address`. Never rejects. */
export async function queryDnsbl(
  lookups: Pick<DnsLookups, 'a' | 'txt'>,
  address: string,
  zone: string,
): Promise<DnsblAnswer> {
  const name = dnsblQueryName(address, zone);
  const found = await lookups.a(name);
  if (found.kind === 'none') return { kind: 'not_listed' };
  if (found.kind === 'error') return { kind: 'error', code: found.code };
  const answer = classifyDnsblCodes(found.values);
  if (answer.kind !== 'listed') return answer;
  const txt = await lookups.txt(name);
  return { ...answer, reason: txt.kind === 'ok' ? (txt.values[0] ?? null) : null };
}

/** What the A records of a DNSBL answer mean (the TXT reason is left to the caller). */
export function classifyDnsblCodes(codes: string[]): DnsblAnswer {
  const refusals = codes.filter(
    (c) => isIP(c) !== 4 || !c.startsWith('127.') || c.startsWith('127.255.255.'),
  );
  if (refusals.length > 0) {
    const known = refusals.map((c) => DNSBL_REFUSALS[c]).find((m) => m !== undefined);
    const meaning =
      known ??
      (refusals.some((c) => c.startsWith('127.255.255.'))
        ? 'the list refused the query'
        : 'the answer is not a blocklist code (a resolver that rewrites NXDOMAIN?)');
    return { kind: 'refused', codes: refusals, meaning };
  }
  return { kind: 'listed', codes, reason: null };
}
