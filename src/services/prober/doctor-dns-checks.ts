/**
 * The checks of `mailverdict doctor` that ask DNS about an egress's address and names: whether the
 * HELO name resolves, reverse DNS (FCrDNS) and whether the HELO name is it, SPF, and blocklists.
 * Each returns a finding without its egress (services/prober/doctor.service.ts adds it).
 */
import { isIP } from 'node:net';
import { queryDnsbl } from '../../engine/dns/dnsbl.js';
import { hostName, type DnsLookups } from '../../engine/dns/lookups.js';
import { checkSpf } from '../../engine/dns/spf.js';
import type { Egress } from '../../engine/egress/egress.js';
import { isFullyQualified } from '../../engine/net/host-name.js';
import type { DoctorCheck } from './doctor.service.js';

/** The domain of an address, lower-cased ('' when there is none). */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : hostName(address.slice(at + 1));
}

/** `helo_resolves`: the HELO name has an A or AAAA record. */
export async function heloResolves(
  helo: string,
  address: string | null,
  lookups: DnsLookups,
): Promise<Omit<DoctorCheck, 'egress'>> {
  const fix = `publish an A (or AAAA) record for '${helo}' pointing at the egress address, or set --helo to a name that has one`;
  if (!isFullyQualified(helo))
    return { id: 'helo_resolves', status: 'fail', message: `HELO name '${helo}' is not a public name`, fix };
  const found = await lookups.addresses(helo);
  switch (found.kind) {
    case 'ok': {
      const matches = address !== null && found.values.includes(address);
      return {
        id: 'helo_resolves',
        status: 'pass',
        message: `HELO name '${helo}' resolves to ${found.values.join(', ')}${matches ? ', this egress' : ''}`,
      };
    }
    case 'none':
      return {
        id: 'helo_resolves',
        status: 'fail',
        message: `HELO name '${helo}' does not resolve (${found.code})`,
        fix,
      };
    case 'error':
      return {
        id: 'helo_resolves',
        status: 'warn',
        message: `cannot tell whether HELO name '${helo}' resolves: DNS ${found.code}`,
        fix: 'check --dns-server and try again',
      };
  }
}

/** `reverse_dns`, and the names it confirmed for `helo_matches_reverse_dns`. */
export interface ReverseDns {
  check: Omit<DoctorCheck, 'egress'>;
  /** The PTR names that resolve back to the address (forward-confirmed). */
  confirmed: string[];
}

/** `reverse_dns`: the address has a PTR name that resolves back to it (FCrDNS). */
export async function reverseDns(address: string, lookups: DnsLookups): Promise<ReverseDns> {
  const fix = `ask whoever owns ${address} (the host or its provider) to set its PTR record to the HELO name, and give that name an A/AAAA record of ${address}`;
  const ptr = await lookups.reverse(address);
  if (ptr.kind === 'error')
    return {
      check: {
        id: 'reverse_dns',
        status: 'warn',
        message: `cannot tell the reverse DNS of ${address}: DNS ${ptr.code}`,
        fix: 'check --dns-server and try again',
      },
      confirmed: [],
    };
  if (ptr.kind === 'none')
    return {
      check: { id: 'reverse_dns', status: 'fail', message: `${address} has no reverse DNS (PTR) name`, fix },
      confirmed: [],
    };
  const forward = await Promise.all(ptr.values.map((name) => lookups.addresses(name)));
  const confirmed = ptr.values.filter((_, i) => {
    const found = forward[i]!;
    return found.kind === 'ok' && found.values.includes(address);
  });
  if (confirmed.length > 0)
    return {
      check: {
        id: 'reverse_dns',
        status: 'pass',
        message: `${address} has reverse DNS ${confirmed.join(', ')}, forward-confirmed`,
      },
      confirmed,
    };
  const transient = forward.some((f) => f.kind === 'error');
  return {
    check: {
      id: 'reverse_dns',
      status: transient ? 'warn' : 'fail',
      message: `${address} has reverse DNS ${ptr.values.join(', ')}, but ${transient ? 'cannot tell whether it resolves' : 'it does not resolve'} back to ${address} (not forward-confirmed)`,
      fix,
    },
    confirmed: [],
  };
}

/** `helo_matches_reverse_dns`: the HELO name is one of the forward-confirmed PTR names. */
export function heloMatches(
  egress: Egress,
  address: string,
  confirmed: string[],
): Omit<DoctorCheck, 'egress'> {
  const helo = hostName(egress.heloName);
  if (confirmed.includes(helo))
    return {
      id: 'helo_matches_reverse_dns',
      status: 'pass',
      message: `HELO name '${helo}' is the reverse DNS of ${address}`,
    };
  if (confirmed.length === 0)
    return {
      id: 'helo_matches_reverse_dns',
      status: 'warn',
      message: `cannot tell: ${address} has no forward-confirmed reverse DNS name to match`,
      fix: 'make reverse_dns pass first',
    };
  const name = confirmed[0]!;
  return {
    id: 'helo_matches_reverse_dns',
    status: 'warn',
    message: `HELO name '${helo}' is not the reverse DNS of ${address} (${confirmed.join(', ')})`,
    fix:
      egress.localAddress === null
        ? `set --helo ${name}`
        : `set --source-address ${egress.localAddress}=${name}`,
  };
}

/** `spf`: the MAIL FROM domain's SPF policy authorises the address. */
export async function spf(
  mailFrom: string,
  address: string,
  helo: string,
  lookups: DnsLookups,
): Promise<Omit<DoctorCheck, 'egress'>> {
  const domain = domainOf(mailFrom);
  const mechanism = isIP(address) === 6 ? `ip6:${address}` : `ip4:${address}`;
  const publish = `publish (or extend) the TXT record of ${domain}: "v=spf1 ${mechanism} -all"`;
  const { result, comment } = await checkSpf(lookups, { sender: mailFrom, ip: address, helo });
  const message = `SPF ${result} for ${mailFrom} from ${address}: ${comment}`;
  switch (result) {
    case 'pass':
      return { id: 'spf', status: 'pass', message };
    case 'fail':
    case 'permerror':
      return {
        id: 'spf',
        status: 'fail',
        message,
        fix: result === 'fail' ? publish : `repair the SPF record of ${domain}`,
      };
    case 'softfail':
    case 'neutral':
    case 'none':
      return { id: 'spf', status: 'warn', message, fix: publish };
    case 'temperror':
      return {
        id: 'spf',
        status: 'warn',
        message: `cannot tell: ${message}`,
        fix: 'check --dns-server and try again',
      };
  }
}

/** `dnsbl`: the address on one zone; a refused query is "cannot tell", never listed or clean. */
export async function dnsbl(
  address: string,
  zone: string,
  lookups: DnsLookups,
): Promise<Omit<DoctorCheck, 'egress'>> {
  const answer = await queryDnsbl(lookups, address, zone);
  switch (answer.kind) {
    case 'not_listed':
      return { id: 'dnsbl', status: 'pass', message: `${address} is not listed on ${zone}` };
    case 'listed':
      return {
        id: 'dnsbl',
        status: 'fail',
        message: `${address} is listed on ${zone} (${answer.codes.join(', ')})${answer.reason === null ? '' : `: ${answer.reason}`}`,
        fix: `follow ${zone}'s delisting procedure (the reason names it), or stop probing from this egress until it is delisted`,
      };
    case 'refused':
      return {
        id: 'dnsbl',
        status: 'warn',
        message: `cannot tell whether ${address} is listed on ${zone}: it answered ${answer.codes.join(', ')}, ${answer.meaning}`,
        fix: 'use your own resolver: point --dns-server at a recursive resolver of your own (not a public one)',
      };
    case 'error':
      return {
        id: 'dnsbl',
        status: 'warn',
        message: `cannot tell whether ${address} is listed on ${zone}: DNS ${answer.code}`,
        fix: 'use your own resolver (--dns-server) and try again',
      };
  }
}
