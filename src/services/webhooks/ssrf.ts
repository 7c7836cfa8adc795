/**
 * SSRF guard for webhook targets: the URL's host must resolve only to public unicast addresses.
 * Checked at submission and again at delivery, where the request is then sent to the checked
 * address (not re-resolved), so a name that changes its answer in between (DNS rebinding)
 * cannot steer the call inside the network.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (dns.lookup semantics); injectable for tests. */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/** How long a submission waits for the system resolver before treating the name as unresolved. */
const LOOKUP_TIMEOUT_MS = 3000;

export const systemResolver: HostResolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lookup of ${host} timed out`)), LOOKUP_TIMEOUT_MS);
  });
  try {
    const all = await Promise.race([dnsLookup(host, { all: true, verbatim: true }), timeout]);
    return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } finally {
    clearTimeout(timer);
  }
};

export interface WebhookTarget {
  url: URL;
  /** The checked addresses; connect to one of these, never re-resolve. */
  addresses: ResolvedAddress[];
}

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, incl. the 169.254.169.254 metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64: embeds an IPv4 address
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * The IPv4 address embedded in an IPv6 one: IPv4-mapped (::ffff:a.b.c.d), SIIT-translated
 * (::ffff:0:a.b.c.d) or the deprecated IPv4-compatible form (::a.b.c.d). Null otherwise.
 */
function embeddedIpv4(address: string): string | null {
  // The URL parser normalises any spelling to the compressed hexadecimal form.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const m = /^::(?:ffff:(?:0:)?)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!m?.[1] || !m[2]) return null;
  const hi = parseInt(m[1], 16);
  const lo = parseInt(m[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when the address is internal: loopback, private, link-local, CGNAT, multicast, reserved... */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return blocked.check(v4, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

function isLoopback(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return LOOPBACK.check(address, 'ipv4');
  const v4 = embeddedIpv4(address);
  if (v4 !== null) return LOOPBACK.check(v4, 'ipv4');
  return family === 6 && LOOPBACK.check(address, 'ipv6');
}

export interface TargetCheckOptions {
  /** Development and tests: allow http:// and loopback targets. */
  allowInsecure: boolean;
  resolve: HostResolver;
  /** At submission a name that does not resolve (yet) passes; delivery then checks it again. */
  allowUnresolved?: boolean;
}

/** Throws `WebhookTargetError` naming the problem unless the URL's syntax and scheme are acceptable. */
export function parseWebhookUrl(raw: string, allowInsecure: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('webhook_url must be an absolute URL');
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new WebhookTargetError('webhook_url must use https://');
  if (url.username !== '' || url.password !== '') {
    throw new WebhookTargetError('webhook_url must not carry credentials');
  }
  return url;
}

/**
 * Resolves the URL's host and checks every address. Throws `WebhookTargetError` when one of
 * them is internal (with `allowInsecure`, loopback is accepted), or when the name does not
 * resolve (unless `allowUnresolved`). All addresses must pass: an attacker's name may answer with a public and a private one.
 */
export async function checkWebhookTarget(url: URL, options: TargetCheckOptions): Promise<WebhookTarget> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  if (family !== 0) {
    addresses = [{ address: host, family: family === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await options.resolve(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      if (options.allowUnresolved === true) return { url, addresses };
      throw new WebhookTargetError(`webhook_url host ${host} does not resolve`);
    }
  }
  for (const a of addresses) {
    if (options.allowInsecure && isLoopback(a.address)) continue;
    if (isInternalAddress(a.address)) {
      throw new WebhookTargetError(`webhook_url host ${host} resolves to an internal address (${a.address})`);
    }
  }
  return { url, addresses };
}
