/**
 * The start-up lookup behind the default HELO names (docs/prober.md, "Identity: the HELO name"):
 * when `--helo` is not set, each source address greets with its forward-confirmed reverse-DNS
 * name, and the other egresses with the host's fully qualified name.
 *
 * Offline-safe: every question has a short budget (`timeoutMs`, 1 s by default, asked in
 * parallel), and one that is not answered in time leaves the default as it was (the host's name
 * when fully qualified, else `localhost`, which the start-up warnings name). The reverse names
 * are asked of the configured resolver (`--dns-server`), as mail servers would; the host's FQDN
 * comes from the system's own resolution of its host name (getaddrinfo, then getnameinfo:
 * /etc/hosts first), as `hostname -f` does.
 */
import { promises as dns } from 'node:dns';
import { hostname } from 'node:os';
import type { Config, HostIdentity } from '../../config.js';
import { bounded, DnsLookups, hostName } from '../../engine/dns/lookups.js';
import { invalidDnsServers } from '../../engine/dns/servers.js';
import { parseSourceAddress } from '../../engine/egress/egress.js';
import { isFullyQualified } from '../../engine/net/host-name.js';
import { isInternalAddress } from '../../engine/net/internal-address.js';

export interface IdentityOptions {
  /** Budget of each lookup (default 1 s). */
  timeoutMs?: number;
  /** Default: the kernel's host name. */
  hostName?: string;
}

const DEFAULT_TIMEOUT_MS = 1_000;

/** What the names of this host are, for `loadConfig`'s default HELO names. Never rejects. */
export async function discoverHostIdentity(
  config: Pick<Config, 'engine'>,
  options: IdentityOptions = {},
): Promise<HostIdentity> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // A bad --dns-server is the command's to report, with its own message.
  if (invalidDnsServers(config.engine.dns.servers).length > 0) return { fqdn: null, reverseNames: {} };
  const lookups = new DnsLookups({
    servers: config.engine.dns.servers,
    timeoutMs: Math.min(timeoutMs, config.engine.dns.timeoutMs),
    tries: 1,
  });
  try {
    const sources = (config.engine.smtp.sourceAddresses ?? [])
      .map((entry) => parseSourceAddress(entry))
      .filter((source) => source.heloName === null)
      .map((source) => source.address)
      .filter((address) => config.engine.dns.allowInternalTargets === true || !isInternalAddress(address));
    const [fqdn, ...names] = await Promise.all([
      hostFqdn(options.hostName ?? hostname(), timeoutMs),
      ...sources.map((address) => confirmedReverseName(address, lookups)),
    ]);
    const reverseNames: Record<string, string> = {};
    sources.forEach((address, i) => {
      const name = names[i];
      if (name !== null && name !== undefined) reverseNames[address] = name;
    });
    return { fqdn: fqdn ?? null, reverseNames };
  } finally {
    lookups.close();
  }
}

/** The first PTR name of `address` that resolves back to it and is fully qualified; else null. */
export async function confirmedReverseName(address: string, lookups: DnsLookups): Promise<string | null> {
  const ptr = await lookups.reverse(address);
  if (ptr.kind !== 'ok') return null;
  for (const name of ptr.values.filter(isFullyQualified)) {
    const forward = await lookups.addresses(name);
    if (forward.kind === 'ok' && forward.values.includes(address)) return name;
  }
  return null;
}

/** The host's fully qualified name: its host name when it is one, else its canonical name. */
async function hostFqdn(name: string, timeoutMs: number): Promise<string | null> {
  if (isFullyQualified(name)) return hostName(name);
  try {
    const { address } = await bounded(dns.lookup(name), timeoutMs);
    const { hostname: canonical } = await bounded(dns.lookupService(address, 0), timeoutMs);
    return isFullyQualified(canonical) ? hostName(canonical) : null;
  } catch {
    return null;
  }
}
