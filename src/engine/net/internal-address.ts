/**
 * Which IP addresses are internal: loopback, private, link-local, CGNAT, multicast, reserved,
 * documentation ranges, and the IPv4 addresses embedded in IPv6 forms. The SMTP prober refuses
 * to connect to them (a caller could otherwise make the service knock on port 25 inside its own
 * network with `user@[10.0.0.5]` or an MX record pointing at a private address), and the webhook
 * guard refuses them as targets. Built on `node:net` BlockList rather than hand-written masks.
 */
import { BlockList, isIP } from 'node:net';

const INTERNAL = new BlockList();
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
  INTERNAL.addSubnet(net, prefix, 'ipv4');
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
  INTERNAL.addSubnet(net, prefix, 'ipv6');
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

/** True when the address is internal; anything that is not an IP address counts as internal. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return INTERNAL.check(v4, 'ipv4');
    return INTERNAL.check(address, 'ipv6');
  }
  return true;
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return LOOPBACK.check(address, 'ipv4');
  const v4 = family === 6 ? embeddedIpv4(address) : null;
  if (v4 !== null) return LOOPBACK.check(v4, 'ipv4');
  return family === 6 && LOOPBACK.check(address, 'ipv6');
}
