/**
 * SSRF guard for webhook targets: the URL's host must resolve only to public unicast addresses.
 * Checked at submission and again at delivery, where the request is then sent to the checked
 * address (not re-resolved), so a name that changes its answer in between (DNS rebinding)
 * cannot steer the call inside the network.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isInternalAddress, isLoopbackAddress as isLoopback } from '../../engine/net/internal-address.js';

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

export { isInternalAddress };

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
  const host = url.hostname;
  if (isIP(host.replace(/^\[(.*)\]$/, '$1')) === 0 && !isDnsHostName(host)) {
    throw new WebhookTargetError(
      'webhook_url host must be an IP address or a DNS name (letters, digits and inner hyphens; labels of at most 63, names of at most 253 characters)',
    );
  }
  return url;
}

/**
 * A host name DNS can hold (RFC 1123 letters-digits-hyphens, after the URL parser's IDNA
 * conversion): the URL parser accepts `exa_mple.com` or 64-character labels, which no resolver
 * will find; refusing them at submission beats failing every delivery attempt.
 */
function isDnsHostName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
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
