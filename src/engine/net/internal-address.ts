/**
 * Which IP addresses are internal: anything but globally routed unicast. The SMTP prober refuses
 * to connect to them (a caller could otherwise make the service knock on port 25 inside its own
 * network with `user@[10.0.0.5]` or an MX record pointing at a private address), and the webhook
 * guard refuses them as targets.
 *
 * The ranges are ipaddr.js's (its `range()` names, kept with the IANA special-purpose registries)
 * rather than hand-kept masks. An IPv6 address that embeds or routes to an IPv4 address (mapped,
 * SIIT, IPv4-compatible, NAT64, 6to4, Teredo) is judged by that IPv4 address, since that is where
 * a packet to it ends up; an address with a zone id (`fe80::1%eth0`) names an interface of this
 * machine and is internal by definition.
 */
import ipaddr from 'ipaddr.js';

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function parse(address: string): Parsed | null {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(text)) return null;
  try {
    return ipaddr.parse(text);
  } catch {
    return null;
  }
}

function ipv4FromBytes(bytes: readonly number[]): ipaddr.IPv4 {
  return new ipaddr.IPv4([bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!]);
}

/**
 * The IPv4 addresses an IPv6 address carries, for the forms that deliver to them; an empty list
 * when it carries none. Teredo (2001::/32) carries two: its server (bits 32-63) and its client
 * (the last 32 bits, inverted).
 */
function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = v6.toByteArray();
  const last4 = bytes.slice(12, 16);
  const range = v6.range();
  // ::ffff:a.b.c.d mapped; ::ffff:0:a.b.c.d SIIT; 64:ff9b::/96 NAT64 and local-use 64:ff9b:1::/48.
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return [ipv4FromBytes(last4)];
  if (range === '6to4') return [ipv4FromBytes(bytes.slice(2, 6))]; // 2002:AABB:CCDD::/48
  if (range === 'teredo')
    return [ipv4FromBytes(bytes.slice(4, 8)), ipv4FromBytes(last4.map((b) => b ^ 0xff))];
  // The deprecated IPv4-compatible form ::a.b.c.d (not :: and ::1, judged as themselves).
  if (bytes.slice(0, 12).every((b) => b === 0) && !(last4[0] === 0 && last4[1] === 0 && last4[2] === 0))
    return [ipv4FromBytes(last4)];
  return [];
}

function isInternalParsed(ip: Parsed): boolean {
  if (ip.kind() === 'ipv4') return ip.range() !== 'unicast';
  const v6 = ip as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return true;
  const carried = embeddedIpv4(v6);
  // Local-use NAT64 translates inside the operator's own network, whatever address it carries.
  if (v6.range() === 'rfc6052' && v6.parts[2] === 1) return true;
  if (carried.length > 0) return carried.some((v4) => v4.range() !== 'unicast');
  return v6.range() !== 'unicast';
}

/** True when the address is internal; anything that is not an IP address counts as internal. */
export function isInternalAddress(address: string): boolean {
  const ip = parse(address);
  return ip === null ? true : isInternalParsed(ip);
}

/** True for 127.0.0.0/8, ::1 and the IPv6 forms that carry a loopback IPv4 address. */
export function isLoopbackAddress(address: string): boolean {
  const ip = parse(address);
  if (ip === null) return false;
  if (ip.kind() === 'ipv4') return ip.range() === 'loopback';
  const v6 = ip as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return false;
  if (v6.range() === 'loopback') return true;
  return embeddedIpv4(v6).some((v4) => v4.range() === 'loopback');
}
